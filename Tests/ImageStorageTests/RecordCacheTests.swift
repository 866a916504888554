import AnimatedImage
import FlipbookTestSupport
import Foundation
import Testing

@testable import ImageStorage

/// The store's records in memory are bounded: at most `storage.recordCacheBytes` of them, the
/// least recently used dropped first, a dropped record read from storage again when needed, every
/// event loop's view saying what the shared table says, and listing leaving the cache as it was.
@Suite struct RecordCacheTests {
    static func cached(_ id: String, checkedAt: Double = 0) -> ImageStore.Cached {
        let gif = TinyAnimations.gif(seed: id.utf8.reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1) })
        let image = try! AnimatedImage(bytes: ImageBytes(gif), limits: .default, verification: .full)
        let record = StoredImage(
            id: id, sha256: ContentHash.sha256Hex(gif), source: .named, storedAt: Date(),
            metadata: ImageMetadata(image: image), outputRevision: AnimatedImage.outputRevision)
        return ImageStore.Cached(
            record: record, metadataJSON: try! ImageStore.encodeMetadata(of: record), version: nil, checkedAt: checkedAt)
    }

    static func commitTiny(_ store: ImageStore, seeds: Range<UInt64>) throws -> [StoredImage] {
        try seeds.map { try ImageStoreLoadingTests.commit(store, TinyAnimations.gif(seed: $0)).0 }
    }

    @Test func aHitInALoopsOwnViewKeepsTheRecordFromBeingDropped() {
        let one = RecordCache.estimatedBytes(Self.cached("a"), views: 2)
        let cache = RecordCache(readers: 2, maxBytes: 3 * one + one / 2)
        cache.store("a", Self.cached("a"), reader: 0)  // in loop 0's view
        cache.store("b", Self.cached("b"), reader: nil)
        cache.store("c", Self.cached("c"), reader: nil)
        // "a" is the least recently used in the shared table; loop 0 now finds it in its view
        // alone, which takes no shared lock.
        #expect(cache.value("a", reader: 0)?.record.id == "a")
        cache.store("d", Self.cached("d"), reader: nil)
        #expect(cache.contains("a"), "the view's hit counts as a use when room is made")
        #expect(!cache.contains("b"), "the least recently used record goes")
        #expect(cache.contains("c") && cache.contains("d"))
        let stats = cache.stats
        #expect(stats.entries == 3 && stats.evictions == 1)
        #expect(stats.bytes <= stats.maxBytes && stats.bytes == 3 * one)
        #expect(stats.hits == 1 && stats.misses == 0)
    }

    /// A view notes each record it hits once until room is next made, so that however often
    /// one record is hit, a hit on another still counts as a use; after room is made, hits are
    /// noted again.
    @Test func everyRecordHitSinceRoomWasLastMadeCountsAsAUse() {
        let one = RecordCache.estimatedBytes(Self.cached("a"), views: 1)
        let cache = RecordCache(readers: 1, maxBytes: 3 * one + one / 2)
        cache.store("b", Self.cached("b"), reader: 0)
        cache.store("a", Self.cached("a"), reader: 0)
        cache.store("c", Self.cached("c"), reader: nil)
        // Far more hits on "a" than the view notes; then one on "b", the least recently stored.
        for _ in 0..<(2 * RecordCache.touchLimit) { #expect(cache.value("a", reader: 0) != nil) }
        #expect(cache.freshRecord("b", reader: 0, checkedAfter: -1)?.id == "b")
        cache.store("d", Self.cached("d"), reader: nil)
        #expect(cache.contains("a") && cache.contains("b") && cache.contains("d"))
        #expect(!cache.contains("c"), "the one record not hit goes")
        // Room was made: a hit on "a" is noted again, so "b" is now the least recently used.
        #expect(cache.value("a", reader: 0) != nil)
        cache.store("e", Self.cached("e"), reader: nil)
        #expect(cache.contains("a") && !cache.contains("b"))
        #expect(cache.stats.hits == 2 * RecordCache.touchLimit + 2 && cache.stats.evictions == 2)
    }

    @Test func everyViewSaysWhatTheSharedTableSays() {
        let one = RecordCache.estimatedBytes(Self.cached("a"), views: 3)
        let cache = RecordCache(readers: 3, maxBytes: 2 * one)
        cache.store("a", Self.cached("a", checkedAt: 1), reader: 0)
        #expect(cache.value("a", reader: 1)?.checkedAt == 1)  // copied into loop 1's view
        #expect(cache.value("a", reader: 2)?.checkedAt == 1)
        // A recheck reaches every view.
        _ = cache.update("a") { $0?.checkedAt = 5 }
        for reader in 0..<3 { #expect(cache.value("a", reader: reader)?.checkedAt == 5) }
        // A newer record replaces the one every view holds.
        cache.store("a", Self.cached("a", checkedAt: 9), reader: nil)
        for reader in 0..<3 { #expect(cache.value("a", reader: reader)?.checkedAt == 9) }
        // Room is made: the views' hits count as uses ("a", just read through every view, stays;
        // "b", never read, goes); then "a" is the least recently used and goes, from every view.
        cache.store("b", Self.cached("b"), reader: nil)
        cache.store("c", Self.cached("c"), reader: nil)
        #expect(cache.contains("a") && !cache.contains("b"))
        cache.store("d", Self.cached("d"), reader: nil)
        #expect(!cache.contains("a"))
        for reader in 0..<3 { #expect(cache.value("a", reader: reader) == nil) }
        // A delete too.
        #expect(cache.value("c", reader: 1) != nil)
        #expect(cache.remove("c") != nil)
        #expect(cache.value("c", reader: 1) == nil && cache.value("c", reader: nil) == nil)
        #expect(cache.stats.entries == 1 && cache.stats.evictions == 2)
    }

    /// The frames' hot path: a loop's view answers with the record alone while it is fresh, and
    /// with nil — counting nothing — when it is not in that view, was checked too long ago or
    /// needs re-indexing (the full lookup then decides).
    @Test func aFreshRecordIsTakenFromTheLoopsViewAlone() {
        let cache = RecordCache(readers: 2, maxBytes: 1 << 20)
        cache.store("a", Self.cached("a", checkedAt: 10), reader: 0)
        #expect(cache.freshRecord("a", reader: 0, checkedAfter: 9.5)?.id == "a")
        #expect(cache.stats.hits == 1)
        #expect(cache.freshRecord("a", reader: 0, checkedAfter: 10) == nil, "checked too long ago")
        #expect(cache.freshRecord("a", reader: 1, checkedAfter: 0) == nil, "not in loop 1's view yet")
        #expect(cache.freshRecord("b", reader: 0, checkedAfter: 0) == nil)
        #expect(cache.stats.hits == 1 && cache.stats.misses == 0, "a refusal counts nothing")
        var stale = Self.cached("c", checkedAt: 10)
        stale.needsReindex = true
        cache.store("c", stale, reader: 0)
        #expect(cache.freshRecord("c", reader: 0, checkedAfter: 0) == nil, "needs re-indexing first")
        // A recheck or a newer record reaches the view's answer.
        _ = cache.update("a") { $0?.checkedAt = 20 }
        #expect(cache.freshRecord("a", reader: 0, checkedAfter: 19)?.id == "a")
        _ = cache.remove("a")
        #expect(cache.freshRecord("a", reader: 0, checkedAfter: 0) == nil)
        #expect(RecordCache(readers: 0, maxBytes: 1 << 20).freshRecord("a", reader: 0, checkedAfter: 0) == nil)
    }

    /// The store's hot path says what its full lookup says of a content id an event loop has
    /// looked up, and nothing of other ids.
    @Test func theStoresFreshRecordAgreesWithItsQuickLookup() throws {
        let directory = ScratchDirectory.make("store")
        // A long recheck period: however slow the machine, the record stays fresh between the two.
        let store = try ImageStore(dataDirectory: directory, recheckSeconds: 3600, readers: 2)
        let record = try Self.commitTiny(store, seeds: 200..<201)[0]
        guard case .found(let quick, _) = store.quickLookup(record.id, reader: 1) else {
            Issue.record("not found")
            return
        }
        let fresh = try #require(store.freshRecord(contentID: record.id, reader: 1))
        #expect(fresh == quick)
        #expect(store.freshRecord(contentID: "some-name", reader: 1) == nil)
        #expect(store.freshRecord(contentID: String(repeating: "0", count: 64), reader: 1) == nil)
    }

    @Test func aRecordLargerThanTheCacheIsNotKept() {
        let cache = RecordCache(readers: 1, maxBytes: RecordCache.estimatedBytes(Self.cached("a"), views: 1) - 1)
        cache.store("a", Self.cached("a"), reader: 0)
        #expect(!cache.contains("a") && cache.value("a", reader: 0) == nil)
        #expect(cache.stats.entries == 0 && cache.stats.bytes == 0)
    }

    @Test func theStoreKeepsItsBoundAndReadsDroppedRecordsAgain() throws {
        let directory = ScratchDirectory.make("store")
        let one = RecordCache.estimatedBytes(Self.cached(String(repeating: "ab", count: 32)), views: 1)
        let store = try ImageStore(dataDirectory: directory, recordCacheBytes: 10 * one)
        let records = try Self.commitTiny(store, seeds: 0..<40)
        var stats = store.recordStats
        #expect(stats.entries <= 10 && stats.entries >= 8)
        #expect(stats.bytes <= stats.maxBytes)
        #expect(stats.evictions == 40 - stats.entries)
        // Every image is still there: a dropped record is read from storage again.
        let missesBefore = stats.misses
        for record in records {
            let found = try #require(store.record(record.id))
            #expect(found.sha256 == record.sha256 && found.metadata == record.metadata)
            if case .found(let quick, _) = store.quickLookup(record.id, reader: 1) {
                #expect(quick.sha256 == record.sha256)
            } else {
                Issue.record("\(record.id) not found by an event loop")
            }
        }
        stats = store.recordStats
        #expect(stats.misses - missesBefore >= 30, "the dropped records were read from storage")
        #expect(stats.bytes <= stats.maxBytes && stats.entries <= 10)
    }

    @Test func listingEveryPageLeavesTheCacheAsItWas() throws {
        let directory = ScratchDirectory.make("store")
        let writer = try ImageStore(dataDirectory: directory)
        let records = try Self.commitTiny(writer, seeds: 100..<137)
        let reader = try ImageStore(dataDirectory: directory)  // as after a restart: nothing in memory
        _ = try #require(reader.record(records[0].id))
        #expect(reader.recordStats.entries == 1)
        var listed: [String] = []
        var cursor: String?
        repeat {
            let page = try reader.list(after: cursor, limit: 5)
            listed += page.images.map(\.id)
            cursor = page.next
        } while cursor != nil
        #expect(listed == records.map(\.id).sorted())
        #expect(reader.recordStats.entries == 1, "listing read the records without keeping them")
    }
}
