import Glibc

/// epoll, eventfd and accept4, which Swift's Glibc module does not export: resolved once with
/// `dlsym` and called through C function pointers (the C calling convention, no shim target).
enum Epoll {
    static let readable: UInt32 = 0x001
    static let writable: UInt32 = 0x004
    static let error: UInt32 = 0x008
    static let hangUp: UInt32 = 0x010
    static let readHangUp: UInt32 = 0x2000
    static let edgeTriggered: UInt32 = 1 << 31
    /// Wake only one of the epoll instances that wait on this descriptor (the listening socket).
    static let exclusive: UInt32 = 1 << 28

    static let controlAdd: Int32 = 1
    static let controlDelete: Int32 = 2

    /// `struct epoll_event` is packed (12 bytes) on x86_64 and naturally aligned (16) elsewhere.
    #if arch(x86_64)
    static let eventStride = 12
    static let dataOffset = 4
    #else
    static let eventStride = 16
    static let dataOffset = 8
    #endif

    private struct Functions: @unchecked Sendable {
        typealias Create = @convention(c) (Int32) -> Int32
        typealias Control = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
        typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
        typealias EventFD = @convention(c) (UInt32, Int32) -> Int32
        typealias Accept4 = @convention(c) (Int32, UnsafeMutableRawPointer?, UnsafeMutablePointer<socklen_t>?, Int32) -> Int32

        let create: Create
        let control: Control
        let wait: Wait
        let eventfd: EventFD
        let accept4: Accept4

        init() {
            let handle = dlopen(nil, RTLD_NOW)
            func load<T>(_ name: String, as type: T.Type) -> T {
                guard let symbol = dlsym(handle, name) else { fatalError("HTTPServer: libc lacks \(name)") }
                return unsafeBitCast(symbol, to: type)
            }
            create = load("epoll_create1", as: Create.self)
            control = load("epoll_ctl", as: Control.self)
            wait = load("epoll_wait", as: Wait.self)
            eventfd = load("eventfd", as: EventFD.self)
            accept4 = load("accept4", as: Accept4.self)
        }
    }

    private static let functions = Functions()

    static func create() -> Int32 { functions.create(O_CLOEXEC) }

    static func add(_ epfd: Int32, fd: Int32, events: UInt32, data: UInt64) -> Int32 {
        var event = [UInt8](repeating: 0, count: 16)
        return event.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: events, toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: data, toByteOffset: dataOffset, as: UInt64.self)
            return functions.control(epfd, controlAdd, fd, raw.baseAddress)
        }
    }

    static func remove(_ epfd: Int32, fd: Int32) {
        var event = [UInt8](repeating: 0, count: 16)
        _ = event.withUnsafeMutableBytes { functions.control(epfd, controlDelete, fd, $0.baseAddress) }
    }

    /// Waits for events into `buffer` (room for `capacity` events); returns the count or -1.
    static func wait(_ epfd: Int32, _ buffer: UnsafeMutableRawPointer, capacity: Int32, timeout: Int32) -> Int32 {
        functions.wait(epfd, buffer, capacity, timeout)
    }

    @inline(__always)
    static func event(_ buffer: UnsafeMutableRawPointer, at index: Int) -> (events: UInt32, data: UInt64) {
        let base = buffer + index * eventStride
        return (base.loadUnaligned(as: UInt32.self), (base + dataOffset).loadUnaligned(as: UInt64.self))
    }

    static func makeEventFD() -> Int32 { functions.eventfd(0, O_NONBLOCK | O_CLOEXEC) }

    static func accept(_ fd: Int32, _ address: UnsafeMutableRawPointer, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
        functions.accept4(fd, address, length, O_NONBLOCK | O_CLOEXEC)
    }
}
