/// The bytes of one image file: immutable, and shared by every copy of the value (copying one
/// copies three words, never the bytes).
///
/// The memory is either allocated here, from an array (tests, the CLI, files that must not be
/// mapped), or owned by someone else — typically a read-only file mapping — and handed over
/// with the action that releases it, which runs when the last copy is gone.
///
/// Indices run from 0 to `count`; every read is bounds-checked and compiles to a compare and a
/// load (the base address is stored in the value itself, not behind the shared owner).
///
/// ```swift
/// let bytes = ImageBytes(fileArray)
/// let mapped = ImageBytes(borrowing: UnsafeRawBufferPointer(start: address, count: size)) {
///     munmap(address, size)
/// }
/// ```
public struct ImageBytes: RandomAccessCollection, @unchecked Sendable {
    // @unchecked: the memory behind `base` is never written after initialisation and lives as
    // long as `owner`, which every copy holds.

    public typealias Index = Int
    public typealias Element = UInt8
    public typealias Indices = Range<Int>
    public typealias SubSequence = Slice<ImageBytes>

    /// Where the bytes live, for memory accounting.
    public enum Storage: Sendable, Hashable {
        /// Allocated on the heap by this type (anonymous memory the process must budget for).
        case heap
        /// Memory someone else owns and releases, e.g. a file mapping (page cache).
        case external
    }

    @usableFromInline let base: UnsafePointer<UInt8>
    /// The number of bytes.
    public let count: Int
    @usableFromInline let owner: Owner

    /// A heap copy of `array`.
    public init(_ array: [UInt8]) {
        let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: Swift.max(1, array.count))
        if array.isEmpty {
            memory.initialize(to: 0)
        } else {
            array.withUnsafeBufferPointer { memory.initialize(from: $0.baseAddress!, count: $0.count) }
        }
        self.base = UnsafePointer(memory)
        self.count = array.count
        self.owner = Owner(heap: memory, release: nil)
    }

    /// `count` bytes on the heap, written once by `initializer` (e.g. straight from a file's
    /// `read` calls, without an intermediate array). Bytes it leaves unwritten are zero.
    /// `onRelease` runs after the memory is freed with the last copy (for accounting).
    public init(
        unsafeUninitializedCount count: Int, onRelease: (@Sendable () -> Void)? = nil,
        initializingWith initializer: (UnsafeMutableBufferPointer<UInt8>) throws -> Void
    ) rethrows {
        precondition(count >= 0, "ImageBytes count must not be negative")
        // At least one byte, so an empty value still has a valid base address.
        let capacity = Swift.max(1, count)
        let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        memory.initialize(repeating: 0, count: capacity)
        var initialized = false
        defer { if !initialized { memory.deallocate() } }  // the initializer threw: no value, no release
        try initializer(UnsafeMutableBufferPointer(start: memory, count: count))
        initialized = true
        self.base = UnsafePointer(memory)
        self.count = count
        self.owner = Owner(heap: memory, release: onRelease)
    }

    /// Bytes in memory that the caller owns and must keep valid and unchanged until `release`
    /// runs, which happens once, when the last copy of this value (and of its slices) is gone.
    /// `memory` must not be empty: an empty file has nothing to map.
    public init(borrowing memory: UnsafeRawBufferPointer, release: @escaping @Sendable () -> Void) {
        guard let address = memory.baseAddress, memory.count > 0 else {
            preconditionFailure("ImageBytes(borrowing:) needs at least one byte of memory")
        }
        self.base = address.assumingMemoryBound(to: UInt8.self)
        self.count = memory.count
        self.owner = Owner(release: release)
    }

    /// Whether the bytes were copied onto the heap or are borrowed (mapped).
    public var storage: Storage { owner.storage }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { count }
    @inlinable public var indices: Range<Int> { 0..<count }

    @inlinable public subscript(position: Int) -> UInt8 {
        precondition(UInt(bitPattern: position) < UInt(bitPattern: count), "ImageBytes index out of range")
        return base[position]
    }

    @inlinable public subscript(bounds: Range<Int>) -> Slice<ImageBytes> {
        precondition(bounds.lowerBound >= 0 && bounds.upperBound <= count, "ImageBytes range out of bounds")
        return Slice(base: self, bounds: bounds)
    }

    /// Calls `body` with the bytes as one buffer, valid only during the call.
    @inlinable
    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withExtendedLifetime(owner) {
            try body(UnsafeBufferPointer(start: base, count: count))
        }
    }

    /// Calls `body` with the bytes of `range` (which must lie within the file) as one buffer,
    /// valid only during the call.
    @inlinable
    public func withUnsafeBufferPointer<R>(
        of range: Range<Int>,
        _ body: (UnsafeBufferPointer<UInt8>) throws -> R
    ) rethrows -> R {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "ImageBytes range out of bounds")
        return try withExtendedLifetime(owner) {
            try body(UnsafeBufferPointer(start: base + range.lowerBound, count: range.count))
        }
    }

    /// Calls `body` with the bytes as raw memory, valid only during the call.
    @inlinable
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBufferPointer { try body(UnsafeRawBufferPointer($0)) }
    }

    @inlinable
    public func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        try withUnsafeBufferPointer(body)
    }

    /// Keeps the memory alive and frees or releases it with the last copy.
    @usableFromInline final class Owner: @unchecked Sendable {
        // @unchecked: both stored properties are immutable; the pointer is only freed in deinit.
        private let heap: UnsafeMutablePointer<UInt8>?
        private let release: (@Sendable () -> Void)?

        init(heap: UnsafeMutablePointer<UInt8>, release: (@Sendable () -> Void)?) {
            self.heap = heap
            self.release = release
        }

        init(release: @escaping @Sendable () -> Void) {
            self.heap = nil
            self.release = release
        }

        var storage: Storage { heap == nil ? .external : .heap }

        deinit {
            heap?.deallocate()
            release?()
        }
    }
}

extension ImageBytes: Equatable {
    /// Same bytes, wherever they are held.
    public static func == (lhs: ImageBytes, rhs: ImageBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.base == rhs.base { return true }
        return lhs.withUnsafeBufferPointer { a in rhs.withUnsafeBufferPointer { b in a.elementsEqual(b) } }
    }
}

extension ImageBytes: CustomStringConvertible {
    public var description: String { "ImageBytes(\(count) bytes, \(storage))" }
}
