import AnimatedImage
import Synchronization
import SystemResources

/// What the record cache holds and has done, for `GET /stats` (`records`) and `/metrics`.
public struct RecordCacheStats: Sendable, Codable, Equatable {
    /// Records held.
    public var entries: Int
    /// Their estimated memory (``RecordCache/estimatedBytes(_:views:)``), at most `maxBytes`.
    public var bytes: Int
    /// `storage.recordCacheBytes`.
    public var maxBytes: Int
    /// Lookups answered from memory, and lookups that had to read storage.
    public var hits: Int
    public var misses: Int
    /// Records dropped to stay within `maxBytes`.
    public var evictions: Int
}

/// The store's records in memory, bounded: at most `maxBytes` of them (estimated), the least
/// recently used dropped first; a record dropped is read from storage again when next needed.
///
/// The records live in one shared table behind a lock; each event loop also has a view of them
/// behind its own lock, holding the records that loop has looked up — always a subset of the
/// shared table (a record dropped there is dropped from every view), sharing the same buffers, so
/// a view costs a table slot per record, not a copy. A loop that finds a record in its own view
/// takes no lock another loop takes; it notes the hit in its view, and those notes reach the
/// shared table's recency order when room is next made (before anything is dropped). Writes —
/// a record read from storage, a recheck, a delete: rare next to lookups — take the shared lock,
/// then each view's, so every view always says what the shared table says.
final class RecordCache: Sendable {
    private struct Entry {
        /// Shared by reference with the views (a view's slot is a pointer, not a copy of the
        /// record's few hundred bytes of fields).
        var box: ImageStore.HeldRecord
        var bytes: Int
    }

    private struct Shared {
        var records = LRUCache<String, Entry>(capacity: .max)
        var bytes = 0
        var hits = 0
        var misses = 0
        var evictions = 0
    }

    private struct View {
        var records = IDTable<Slot>()
        /// Ids hit in this view since room was last made, each once, in the order of their first
        /// hit since then (at most ``touchLimit``).
        var touched: [String] = []
        /// Counts the times ``touched`` was taken: a record is noted in it once per interval.
        var interval = 1
        var hits = 0

        /// Counts a hit of the record of `id` (its UTF-8 bytes) at `slot`, and notes it unless it
        /// is noted in this interval already. Once an interval: appending each hit's id retained
        /// the string every view's record shares, and filled the list with the few ids hit most,
        /// after which no other was noted. (The slot is changed only when noted: looked up for
        /// change on every hit, it cost more than it saved.)
        mutating func countHit(_ slot: Slot, _ id: UnsafeRawBufferPointer) {
            hits += 1
            let interval = self.interval
            guard slot.notedIn != interval, touched.count < RecordCache.touchLimit else { return }
            records.modify(utf8: id) { $0.notedIn = interval }
            touched.append(slot.held.id)
        }

        /// Holds `box` as the record of its id, not noted yet.
        mutating func hold(_ box: ImageStore.HeldRecord) {
            records.insert(Slot(held: box), forUTF8: box.key)
        }

        /// The ids noted since the last call, each once; a new interval starts.
        mutating func takeTouched() -> [String] {
            defer {
                touched.removeAll(keepingCapacity: true)
                interval += 1
            }
            return touched
        }
    }

    /// A view's record, with the interval it was last noted in (``View/countHit(_:_:)``).
    private struct Slot {
        let held: ImageStore.HeldRecord
        var notedIn = 0
    }

    /// The most records a view notes as hit between two evictions; more are not noted.
    static let touchLimit = 4096

    let maxBytes: Int
    private let shared: Mutex<Shared>
    private let views: PerLoop<View>
    private let hasViews: Bool
    /// The views a record may be in (for its estimate).
    private let viewCount: Int

    /// - Parameter readers: the event loops that look records up (one view each).
    /// - Parameter maxBytes: the most memory the records may take (estimated).
    init(readers: Int, maxBytes: Int) {
        self.maxBytes = max(0, maxBytes)
        shared = Mutex(Shared())
        hasViews = readers > 0
        viewCount = max(0, readers)
        views = PerLoop(count: max(1, readers)) { View() }
    }

    /// The record of `id` as `reader` (an event loop's index, nil for any other thread) finds it.
    func value(_ id: String, reader: Int?) -> ImageStore.Cached? {
        if let reader, hasViews {
            var id = id
            let seen = id.withUTF8 { id in
                views.withLock(reader) { view -> ImageStore.Cached? in
                    guard let slot = view.records.find(UnsafeRawBufferPointer(id)) else { return nil }
                    view.countHit(slot, UnsafeRawBufferPointer(id))
                    return slot.held.cached
                }
            }
            if let seen { return seen }
        }
        return shared.withLock { state -> ImageStore.Cached? in
            guard let entry = state.records.value(for: id) else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            if let reader, hasViews { views.withLock(reader) { $0.hold(entry.box) } }
            return entry.box.cached
        }
    }

    /// The record alone (not its metadata document) of `id` as `reader`'s view holds it, when it
    /// was checked after `checkedAfter` and needs no re-indexing; nil otherwise, counting nothing
    /// (then ask ``value(_:reader:)``). A hit is counted and noted as ``value(_:reader:)`` notes
    /// it, but only the record is copied out of its box.
    func freshRecord(_ id: String, reader: Int, checkedAfter: Double) -> StoredImage? {
        var id = id
        return id.withUTF8 { freshRecord(UnsafeRawBufferPointer($0), reader: reader, checkedAfter: checkedAfter)?.cached.record }
    }

    /// ``freshRecord(_:reader:checkedAfter:)`` of the id whose UTF-8 bytes are `id` (a request
    /// path's: no `String` made, no SipHash), handed out as held: nothing of it copied.
    func freshRecord(_ id: UnsafeRawBufferPointer, reader: Int, checkedAfter: Double) -> ImageStore.HeldRecord? {
        guard hasViews else { return nil }
        return views.withLock(reader) { view -> ImageStore.HeldRecord? in
            guard let slot = view.records.find(id), slot.held.cached.checkedAt > checkedAfter,
                !slot.held.cached.needsReindex
            else { return nil }
            view.countHit(slot, id)
            return slot.held
        }
    }

    /// Whether a record of `id` is held (not counted as a lookup, recency untouched).
    func contains(_ id: String) -> Bool {
        shared.withLock { $0.records.peek(id) != nil }
    }

    /// Keeps `cached` as the record of `id` (in `reader`'s view too), making room by dropping
    /// the least recently used records. A record larger than the whole cache is not kept (and
    /// any older record of `id` goes).
    func store(_ id: String, _ cached: ImageStore.Cached, reader: Int?) {
        let bytes = Self.estimatedBytes(cached, views: viewCount)
        guard bytes <= maxBytes else {
            _ = remove(id)
            return
        }
        shared.withLock { state in
            if let old = state.records.removeValue(for: id) { state.bytes -= old.bytes }
            var victims: [String] = []
            if state.bytes + bytes > maxBytes {
                noteTouches(&state)
                while state.bytes + bytes > maxBytes, let oldest = state.records.removeOldest() {
                    state.bytes -= oldest.value.bytes
                    state.evictions += 1
                    victims.append(oldest.key)
                }
            }
            let box = ImageStore.HeldRecord(id: id, cached)
            state.records.insert(Entry(box: box, bytes: bytes), for: id)
            state.bytes += bytes
            views.withEachLock { view in
                for victim in victims { view.records.removeValue(for: victim) }
                if view.records[id] != nil { view.hold(box) }
            }
            if let reader, hasViews { views.withLock(reader) { $0.hold(box) } }
        }
    }

    /// Applies `change` to the record of `id` if it is held (nil removes it); returns the result.
    func update(_ id: String, _ change: (inout ImageStore.Cached?) -> Void) -> ImageStore.Cached? {
        shared.withLock { state -> ImageStore.Cached? in
            guard let entry = state.records.peek(id) else { return nil }
            var cached: ImageStore.Cached? = entry.box.cached
            change(&cached)
            guard let cached else {
                state.records.removeValue(for: id)
                state.bytes -= entry.bytes
                views.withEachLock { $0.records.removeValue(for: id) }
                return nil
            }
            let bytes = Self.estimatedBytes(cached, views: viewCount)
            let box = ImageStore.HeldRecord(id: id, cached)
            state.records.replace(Entry(box: box, bytes: bytes), for: id)
            state.bytes += bytes - entry.bytes
            views.withEachLock { view in
                if view.records[id] != nil { view.hold(box) }
            }
            return cached
        }
    }

    /// Drops the record of `id` everywhere; returns it when it was held.
    @discardableResult
    func remove(_ id: String) -> ImageStore.Cached? {
        shared.withLock { state -> ImageStore.Cached? in
            guard let entry = state.records.removeValue(for: id) else { return nil }
            state.bytes -= entry.bytes
            views.withEachLock { $0.records.removeValue(for: id) }
            return entry.box.cached
        }
    }

    /// What the cache holds and has done.
    var stats: RecordCacheStats {
        shared.withLock { state in
            var viewHits = 0
            views.withEachLock { viewHits += $0.hits }
            return RecordCacheStats(
                entries: state.records.count, bytes: state.bytes, maxBytes: maxBytes,
                hits: state.hits + viewHits, misses: state.misses, evictions: state.evictions)
        }
    }

    /// Moves the records the views hit since the last call to the front of the recency order.
    private func noteTouches(_ state: inout Shared) {
        guard hasViews else { return }
        var touched: [[String]] = []
        views.withEachLock { touched.append($0.takeTouched()) }
        for ids in touched {
            for id in ids { state.records.touch(id) }
        }
    }

    /// The memory a record takes in a cache with `views` views, estimated: its fields, metadata
    /// document, frame table and strings, with the allocator's headers, and the table slots that
    /// hold it (the shared one and one per view, at their hash tables' load).
    static func estimatedBytes(_ cached: ImageStore.Cached, views: Int) -> Int {
        let record = cached.record
        var bytes = fixedBytes + views * viewSlotBytes + cached.metadataJSON.count
        bytes += 32 + record.metadata.frames.count * MemoryLayout<ImageMetadata.Frame>.stride
        // The id's bytes, one array shared by the views' tables (``ImageStore/HeldRecord/key``).
        bytes += 32 + record.id.utf8.count
        for text in [record.id, record.sha256, record.name ?? "", record.metadata.format, record.metadata.mimeType] {
            bytes += stringBytes(text)
        }
        if let origin = record.origin {
            bytes += 64 + stringBytes(origin.url) + stringBytes(origin.etag ?? "") + stringBytes(origin.lastModified ?? "")
        }
        return bytes
    }

    /// What every record costs whatever its size: its fields (boxed), the shared table's slot,
    /// key and hash entry, and the allocator's headers and slack of its buffers. Measured: 100,000
    /// records of 8×8 2-frame animations decoded as from storage, in a cache with two views, took
    /// 2,390 bytes each of the process's RSS (2026-11-28); the estimate says 2,399.
    static let fixedBytes = MemoryLayout<ImageStore.Cached>.stride + 1024

    /// A view's hash-table entry for a record: its hash, key and slot, twice over (a table is
    /// between a quarter and half full). 64 since the slot holds the interval it was noted in
    /// (48 when the 2,399 above was measured).
    static let viewSlotBytes = 2 * (MemoryLayout<UInt64>.stride + MemoryLayout<[UInt8]>.stride + MemoryLayout<Slot?>.stride)

    /// The heap a string takes: none up to 15 UTF-8 bytes (stored inline), else a buffer.
    private static func stringBytes(_ text: String) -> Int {
        text.utf8.count <= 15 ? 0 : 32 + text.utf8.count
    }
}

extension RecordCacheStats {
    /// The figures in Prometheus text format (`flipbook_record_cache_*`).
    package var prometheusText: String {
        "# TYPE flipbook_record_cache_entries gauge\n"
            + "flipbook_record_cache_entries \(entries)\n"
            + "# TYPE flipbook_record_cache_bytes gauge\n"
            + "flipbook_record_cache_bytes \(bytes)\n"
            + "# TYPE flipbook_record_cache_max_bytes gauge\n"
            + "flipbook_record_cache_max_bytes \(maxBytes)\n"
            + "# TYPE flipbook_record_cache_hits_total counter\n"
            + "flipbook_record_cache_hits_total \(hits)\n"
            + "# TYPE flipbook_record_cache_misses_total counter\n"
            + "flipbook_record_cache_misses_total \(misses)\n"
            + "# TYPE flipbook_record_cache_evictions_total counter\n"
            + "flipbook_record_cache_evictions_total \(evictions)\n"
    }
}
