import Synchronization

/// Prepared responses that several event loops hand out, each loop handing out its own
/// (``HTTPPreparedResponse/Template/response()``), made by that loop the first time it needs one.
///
/// Why: answering with a prepared response retains it, and a retain writes the object's
/// reference count. One object handed out by two loops has that line move between their cores
/// on every response — in a profile at 8 connections most of `swift_retain`'s time was that
/// line's load. A response made on the loop's own thread also comes from that thread's heap,
/// away from what other threads write. The first answer of each loop allocates its response;
/// later ones allocate nothing. The answers are kept as templates, not objects: nothing is
/// allocated that no loop answers with.
public struct LoopCopies: ~Copyable, @unchecked Sendable {
    // (Unchecked: the slots are only reached through atomics, the templates only read.)
    /// One allocation: per loop and template an `Unmanaged` response's bits (retained once,
    /// released in `deinit`; 0 until made), then the templates. One allocation, not an array
    /// beside a buffer of slots: a hit reads its slot without touching the templates, and the
    /// frame costs one heap block, not two.
    private let storage: UnsafeMutableRawPointer
    private let templateCount: Int
    private let loops: Int

    /// Responses made from `templates` for `loops` loops (at least one).
    public init(_ templates: [HTTPPreparedResponse.Template], loops: Int) {
        self.loops = max(1, loops)
        templateCount = templates.count
        let slotCount = self.loops * templates.count
        storage = .allocate(byteCount: Self.storageBytes(slots: slotCount, templates: templates.count), alignment: 16)
        let slots = storage.bindMemory(to: Atomic<UInt>.self, capacity: slotCount)
        for i in 0..<slotCount { (slots + i).initialize(to: Atomic(0)) }
        (storage + slotCount * MemoryLayout<Atomic<UInt>>.stride)
            .bindMemory(to: HTTPPreparedResponse.Template.self, capacity: templates.count)
            .initialize(from: templates, count: templates.count)
    }

    /// The bytes of the storage for `slots` slots and `templates` templates.
    private static func storageBytes(slots: Int, templates: Int) -> Int {
        slots * MemoryLayout<Atomic<UInt>>.stride + templates * MemoryLayout<HTTPPreparedResponse.Template>.stride
    }

    private var slots: UnsafeMutablePointer<Atomic<UInt>> {
        storage.assumingMemoryBound(to: Atomic<UInt>.self)
    }

    /// The templates, after the slots.
    private var templates: UnsafeMutablePointer<HTTPPreparedResponse.Template> {
        (storage + loops * templateCount * MemoryLayout<Atomic<UInt>>.stride)
            .assumingMemoryBound(to: HTTPPreparedResponse.Template.self)
    }

    /// A new response made from template `index`: for a thread that is not an event loop (rare
    /// answers).
    public func fresh(_ index: Int) -> HTTPPreparedResponse { templates[index].response() }

    /// Loop `loop`'s response from template `index` (made now if it is the first), one reference
    /// handed out.
    @inline(__always)
    public func response(_ index: Int, loop: Int) -> HTTPPreparedResponse {
        let slot = (loop % loops) * templateCount + index
        let bits = slots[slot].load(ordering: .acquiring)
        guard bits != 0 else { return makeResponse(slot: slot, from: index) }
        return Self.response(bits).takeUnretainedValue()
    }

    /// The response whose bits a slot holds (never 0).
    @inline(__always)
    private static func response(_ bits: UInt) -> Unmanaged<HTTPPreparedResponse> {
        Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped)
    }

    @inline(never)
    private func makeResponse(slot: Int, from index: Int) -> HTTPPreparedResponse {
        let made = Unmanaged.passRetained(templates[index].response())
        let bits = UInt(bitPattern: made.toOpaque())
        let (stored, found) = slots[slot].compareExchange(
            expected: 0, desired: bits, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        guard !stored else { return made.takeUnretainedValue() }
        // Another thread made this loop's response first (only a thread answering as `loop` does).
        made.release()
        return Self.response(found).takeUnretainedValue()
    }

    /// The heap bytes these responses take once every loop has made its own, besides what the
    /// templates' arrays and file bodies keep (``HTTPPreparedResponse/Template/overheadBytes``):
    /// the storage and every loop's responses.
    public var heapBytes: Int {
        HTTPPreparedResponse.allocatedBytes(Self.storageBytes(slots: loops * templateCount, templates: templateCount))
            + loops * (0..<templateCount).reduce(0) { $0 + templates[$1].responseBytes }
    }

    deinit {
        let slotCount = loops * templateCount
        for i in 0..<slotCount {
            let bits = slots[i].load(ordering: .acquiring)
            if bits != 0 { Self.response(bits).release() }
        }
        templates.deinitialize(count: templateCount)
        slots.deinitialize(count: slotCount)
        storage.deallocate()
    }
}
