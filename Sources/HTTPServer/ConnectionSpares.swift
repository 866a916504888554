/// Memory an event loop's connections pass between them, one piece of each kind: lent by a
/// connection that has finished with it (everything read parsed, every request answered,
/// everything queued written) and taken by the next one on the loop to need it. With 256
/// connections, a buffer of each kind per connection was out of the core's cache by that
/// connection's next request; passed along, the one in use is the one used last. Loop thread only.
struct ConnectionSpares {
    /// A response head's staging buffer and a segment list (``OutputQueue/lend(to:)``).
    var output = OutputQueue.Spare()
    /// A queue for the requests in flight, empty.
    var exchanges: [Connection.Exchange] = []
    /// A read buffer, a nil base when none is here. Owned by whoever holds it: freed by
    /// ``deallocate()`` when here, else by its connection.
    var readBuffer = Self.noReadBuffer

    /// No read buffer.
    static var noReadBuffer: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(start: nil, count: 0) }

    /// The spare read buffer (handed over: the caller owns it), or a new one of `bytes`.
    mutating func takeReadBuffer(bytes: Int) -> UnsafeMutableRawBufferPointer {
        if readBuffer.baseAddress != nil {
            defer { readBuffer = Self.noReadBuffer }
            return readBuffer
        }
        return UnsafeMutableRawBufferPointer.allocate(byteCount: max(1024, bytes), alignment: 16)
    }

    /// Keeps `buffer` if no read buffer is here; returns whether it did (the caller then no longer
    /// owns it).
    mutating func lendReadBuffer(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
        guard readBuffer.baseAddress == nil else { return false }
        readBuffer = buffer
        return true
    }

    /// Frees the read buffer held here (at the loop's end).
    func deallocate() {
        readBuffer.deallocate()
    }
}
