import Synchronization
import SystemResources

/// The cache's frames as the threads that serve hits see them — one table per such thread (the
/// HTTP server's event loops), each behind its own lock — so that a cache hit takes no lock
/// another thread takes: not the cache's lock, not another loop's table.
///
/// The tables mirror the entries' frames: a frame is set in every table when the cache stores it
/// and cleared when it evicts it (``ImageEntry/store(_:at:)``, ``ImageEntry/drop(_:)``), an image
/// appears when the cache first hears of it and goes when the cache forgets it; those happen at
/// the rate of decodes, under the cache's lock, and take each table's lock in turn. A frame is
/// only shared (`CachedFrame` is immutable), never copied. A table is keyed by the images' ids
/// through ``IDTable`` (a hit hashes the id's bytes with a multiply-fold, not `String`'s SipHash,
/// and reads the image where it is held).
final class HitTables: Sendable {
    /// One image in one table.
    struct Image: Sendable {
        let entry: ImageEntry
        var frames: [CachedFrame?]
        var cachedCount = 0
    }

    /// One thread's table; padded (the tables are made one after another, side by side on the
    /// heap), so that its lock and counter, written on every hit, share no cache line with
    /// another thread's.
    private final class Table: Sendable {
        private let before = CacheLinePadding()
        let images = Mutex(IDTable<Image>())
        /// Hits answered through this table (only its own thread adds).
        let hits = Atomic<Int>(0)
        private let after = CacheLinePadding()
    }

    private let tables: [Table]

    /// `count` tables (at least one).
    init(count: Int) {
        tables = (0..<max(1, count)).map { _ in Table() }
    }

    var count: Int { tables.count }

    /// What an image of `frameCount` frames costs `tables` tables: in each, its slot at the
    /// table's lowest fill (``IDTable/bytesPerIDAtMost``) and the table's own array of its frames
    /// (copied from the entry's at the first frame set); once, the copy of its id's bytes they
    /// share (a content id and a rendition's suffix: 128 bytes with the array's header).
    static func imageBytes(frameCount: Int, tables: Int) -> Int {
        tables == 0 ? 0 : 128 + tables * (IDTable<Image>.bytesPerIDAtMost + 48 + 8 * frameCount)
    }

    // MARK: Hits (any thread; the table of `reader`)

    /// `hit`'s answer about frame `index` of the image cached under `id`, its entry, and whether
    /// the frames ready from there on run low (down to where decode-ahead starts a new run: half
    /// the window, or any frame missing from a whole animation), when `reader`'s table holds that
    /// frame; nil otherwise. `hit` runs under the table's lock and reads them where the table
    /// holds them — nothing is retained but what it keeps — so it must be short and must not
    /// take the cache's lock (taken before a table's).
    func withHit<Answer: Sendable>(
        _ id: String, index: Int, reader: Int,
        _ hit: (_ entry: ImageEntry, _ frame: CachedFrame, _ runningLow: Bool) -> Answer
    ) -> Answer? {
        // The table is lent, not retained: `tables` is a constant of this object, which the
        // caller holds.
        let table = tables.withUnsafeBufferPointer { Unmanaged.passUnretained($0[reader % $0.count]) }
        return table._withUnsafeGuaranteedRef { table in
            let answer = table.images.withLock { images -> Answer? in
                // Reached for change (`modify`), though only read: the image is then reached in
                // place, where lent out for reading (`read`) it was copied, a retain and a
                // release of its entry and its frames.
                images.modify(id) { image -> Answer? in
                    guard index >= 0, index < image.frames.count, let frame = Self.lent(image.frames, index) else {
                        return nil
                    }
                    let runningLow = Self.runningLow(image, from: index)
                    return frame._withUnsafeGuaranteedRef { hit(image.entry, $0, runningLow) }
                } ?? nil
            }
            if answer != nil { table.hits.wrappingAdd(1, ordering: .relaxed) }
            return answer
        }
    }

    /// Frame `index` of `frames`, lent for as long as the table's lock is held (the table keeps
    /// it till then): read as a strong reference it was retained and released on every hit, and
    /// its reference count is written by every event loop that hits it — the line moves between
    /// their cores (in a perf profile at 8 connections, most of `swift_retain`'s time was that
    /// line's load). `frames` is an array of optional references, each one pointer wide.
    @inline(__always)
    private static func lent(_ frames: [CachedFrame?], _ index: Int) -> Unmanaged<CachedFrame>? {
        frames.withUnsafeBufferPointer { buffer in
            UnsafeRawPointer(buffer.baseAddress.unsafelyUnwrapped + index).load(as: Unmanaged<CachedFrame>?.self)
        }
    }

    /// ``ImageEntry/nextRunStart``'s test on the table's copy of the frames, with the playhead at
    /// `index` (frames that requests wait for count as missing: the lock then finds them taken).
    private static func runningLow(_ image: Image, from index: Int) -> Bool {
        let count = image.frames.count
        let window = image.entry.window
        guard count > 0, window > 0 else { return false }
        if window >= count { return image.cachedCount < count }
        var ready = 0
        while ready <= window / 2 && image.frames[(index + ready) % count] != nil { ready += 1 }
        return ready <= window / 2
    }

    /// Frame `index` of `id` if it is cached, through the first table, counting no hit.
    func peek(_ id: String, index: Int) -> CachedFrame? {
        tables[0].images.withLock { images in
            images.read(id) { image in index >= 0 && index < image.frames.count ? image.frames[index] : nil } ?? nil
        }
    }

    /// Whether `reader`'s table holds frame `index` of `id` (no hit is counted; for tests).
    func holds(_ id: String, index: Int, reader: Int) -> Bool {
        tables[reader % tables.count].images.withLock {
            $0.read(id) { index < $0.frames.count && $0.frames[index] != nil } ?? false
        }
    }

    /// Hits answered through every table so far.
    var hits: Int { tables.reduce(0) { $0 + $1.hits.load(ordering: .relaxed) } }

    // MARK: Changes (under the cache's lock)

    /// Shows `entry` (with the frames it holds) to every table.
    func insert(_ entry: ImageEntry) {
        let image = Image(entry: entry, frames: entry.frames, cachedCount: entry.cachedCount)
        // One copy of the id's bytes, shared by every table.
        let key = Array(entry.id.utf8)
        for table in tables { table.images.withLock { $0.insert(image, forUTF8: key) } }
    }

    /// Takes `entry` out of every table.
    func remove(_ entry: ImageEntry) {
        for table in tables {
            table.images.withLock { images in
                if images.read(entry.id, { $0.entry === entry }) == true { images.removeValue(for: entry.id) }
            }
        }
    }

    /// Sets (or clears, with nil) frame `i` of `entry` in every table.
    func set(_ frame: CachedFrame?, at i: Int, of entry: ImageEntry) {
        for table in tables {
            table.images.withLock { images in
                images.modify(entry.id) { image in
                    guard image.entry === entry, i < image.frames.count else { return }
                    let had = image.frames[i] != nil
                    image.frames[i] = frame
                    image.cachedCount += (frame != nil ? 1 : 0) - (had ? 1 : 0)
                }
            }
        }
    }
}
