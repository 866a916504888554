/// What a connection keeps about the requests it is answering: one ``Exchange`` per request whose
/// head was parsed (queued in order until its response is written), and how the body of the
/// request being received is handled (``BodyMode``, ``Incoming``).
extension Connection {
    /// A request that has a head and waits for (or has) its response. A value kept in the queue
    /// itself (no allocation per request), changed in place there and taken out of it, not
    /// copied, when its response is written.
    struct Exchange {
        let sequence: UInt64
        /// What the response hook is handed when the response is queued: made with the exchange
        /// (the head's method, target and fields, the route, the id, the peer) and moved out of
        /// it then, not copied field by field (a retain and a release of each of its references).
        /// nil once taken.
        var record: HTTPAccessRecord?
        let isHead: Bool
        let isHTTP10: Bool
        var keepAlive: Bool
        let startNanoseconds: UInt64
        /// The answer, once it came while an earlier request's was still missing.
        var response: HTTPResponse? {
            didSet { isAnswered = response != nil }
        }
        /// Whether ``response`` is set (read without copying the response out).
        private(set) var isAnswered = false
        var pendingContinue = false

        init(
            sequence: UInt64, record: consuming HTTPAccessRecord, isHead: Bool, isHTTP10: Bool, keepAlive: Bool,
            startNanoseconds: UInt64
        ) {
            self.sequence = sequence
            self.record = record
            self.isHead = isHead
            self.isHTTP10 = isHTTP10
            self.keepAlive = keepAlive
            self.startNanoseconds = startNanoseconds
        }
    }

    /// Calls `body` with ``loop`` borrowed: a call made on the `unowned(unsafe)` reference
    /// itself retains the loop before and releases it after. Safe for the reason ``loop`` is
    /// unowned: the loop owns this connection (its table of connections holds it) and outlives it.
    @inline(__always)
    func withLoop<R>(_ body: (EventLoop) -> R) -> R {
        Unmanaged.passUnretained(loop)._withUnsafeGuaranteedRef(body)
    }

    /// The position in ``inFlight`` of the exchange numbered `sequence`, or nil. The exchanges are
    /// read in place, here and in ``inFlightState(_:)``: an exchange is address-only (its record
    /// is), and a field read through the array's getter copied the whole exchange first (a retain
    /// and a release of each of its references).
    func inFlightIndex(of sequence: UInt64) -> Int? {
        inFlight.withUnsafeBufferPointer { exchanges in
            var index = 0
            while index < exchanges.count {
                if exchanges[index].sequence == sequence { return index }
                index += 1
            }
            return nil
        }
    }

    /// Whether the exchange at `index` of ``inFlight`` is answered, keeps the connection alive
    /// and waits for its `100 Continue`, read in place.
    func inFlightState(_ index: Int) -> (isAnswered: Bool, keepAlive: Bool, pendingContinue: Bool) {
        inFlight.withUnsafeBufferPointer { ($0[index].isAnswered, $0[index].keepAlive, $0[index].pendingContinue) }
    }

    /// How the body of the request being received is handled. The cases with payloads are
    /// indirect, so that the mode of a bodiless request (`reject`, the hot path) is copied and
    /// destroyed as a word instead of through the payloads' layout.
    enum BodyMode {
        /// The answer is already decided; the body (if any) is not read.
        case reject
        /// Collected in memory, then the handler runs.
        indirect case collect(maxBytes: Int, handler: Router.Handler, request: HTTPRequest, body: [UInt8])
        /// Streamed to a sink.
        indirect case stream(maxBytes: Int, sink: any HTTPBodySink)
    }

    /// The request whose head was parsed but whose body has not ended.
    struct Incoming {
        var sequence: UInt64
        var mode: BodyMode
        var received = 0
    }
}
