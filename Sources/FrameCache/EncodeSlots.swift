import Synchronization

/// The results of one composite's encodes, filled in by the threads that share them out
/// (``EncodeHelpers``): each index is written by exactly one thread, and read
/// once they have all returned.
final class EncodeSlots: Sendable {
    private let slots: Mutex<[Result<CachedFrame, FrameCacheError>?]>

    init(count: Int) {
        slots = Mutex(Array(repeating: nil, count: count))
    }

    func set(_ index: Int, _ result: Result<CachedFrame, FrameCacheError>) {
        slots.withLock { $0[index] = result }
    }

    /// Every slot's result (a slot never filled reads as a failure, which cannot happen when
    /// every index was taken).
    var results: [Result<CachedFrame, FrameCacheError>] {
        slots.withLock { $0.map { $0 ?? .failure(.decodeFailed("not encoded")) } }
    }
}
