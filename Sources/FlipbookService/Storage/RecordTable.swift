/// The store's records by id, kept once per event loop plus once for every other thread, each
/// copy behind its own lock: a loop looks an id up in its own copy, so the lookup on the hot path
/// takes no lock that another loop or a storage thread takes. Writes — a recheck, an upload, a
/// delete, a record read from storage: rare next to lookups — go to every copy, so all copies
/// always say the same.
final class RecordTable: Sendable {
    /// Copy 0 is for threads that are not event loops; loop `n` reads copy `1 + n`.
    private let copies: PerLoop<[String: ImageStore.Cached]>

    /// - Parameter readers: the event loops that look records up.
    init(readers: Int) {
        copies = PerLoop(count: 1 + max(0, readers)) { [:] }
    }

    private func copy(_ reader: Int?) -> Int {
        reader.map { 1 + $0 % max(1, copies.count - 1) } ?? 0
    }

    /// The record of `id` as `reader` (an event loop's index, nil for any other thread) sees it.
    func value(_ id: String, reader: Int?) -> ImageStore.Cached? {
        copies.withLock(copy(reader)) { $0[id] }
    }

    /// Sets (or, with nil, removes) the record of `id` everywhere.
    func set(_ id: String, _ value: ImageStore.Cached?) {
        copies.withEachLock { $0[id] = value }
    }

    /// Applies `change` to the record of `id` everywhere; returns the result.
    func update(_ id: String, _ change: (inout ImageStore.Cached?) -> Void) -> ImageStore.Cached? {
        var result: ImageStore.Cached?
        copies.withEachLock { records in
            var entry = records[id]
            change(&entry)
            records[id] = entry
            result = entry
        }
        return result
    }

    /// Removes the record of `id` everywhere; returns it, and whether another id still has the
    /// same content (decided with the removal, under one lock).
    func remove(_ id: String) -> (removed: ImageStore.Cached?, contentStillUsed: Bool) {
        var removed: ImageStore.Cached?
        var stillUsed = false
        copies.withEachLock { records in
            guard let gone = records.removeValue(forKey: id) else { return }
            if removed == nil {
                removed = gone
                stillUsed = records.values.contains { $0.record.sha256 == gone.record.sha256 }
            }
        }
        return (removed, stillUsed)
    }
}
