import AnimatedImage
import FlipbookTestSupport
import Foundation
import Testing

@testable import FrameCache

/// What the cache lets go of is freed: an entry (and its image's record, held by its closures)
/// that eviction forgot must not outlive its place in the cache, or a library read image after
/// image grows the heap outside the budget (issue 37: 100,000 entries alive with 37,000 cached).
@Suite("Frame cache: entries it forgets are freed", .serialized, .ownThreads)
struct EntryLifetimeTests {
    @Test func entriesEvictedAndForgottenAreFreed() throws {
        let image = try TestImages.small()
        let budget = 400_000
        var configuration = FrameCacheConfiguration(budgetBytes: budget, decodeThreads: 2, window: WindowPolicy())
        configuration.hitTables = 2
        let cache = FrameCache(configuration: configuration)
        defer { cache.shutdown() }
        var watched: [(key: String, id: String, entry: Weak<ImageEntry>, source: Weak<ImageSource>)] = []
        let count = 600
        for n in 0..<count {
            let cacheable = CacheableImage(id: "i\(n)", image: image)
            #expect(cache.cachedFrame(id: cacheable.key, index: 0, reader: n % 2) == nil)
            #expect(cache.fetch(cacheable, 0).frame != nil)
            cache.lock.lock()
            let entry = cache.state.entries[cacheable.key]
            watched.append((cacheable.key, cacheable.id, Weak(entry), Weak(entry?.source)))
            cache.lock.unlock()
        }
        cache.waitUntilIdle(timeout: 120)
        cache.lock.lock()
        let held = Set(cache.state.entries.values.map { ObjectIdentifier($0) })
        let sources = Set(cache.state.sources.values.map { ObjectIdentifier($0) })
        var alive = 0
        var aliveSources = 0
        for w in watched {
            if let entry = w.entry.object, !held.contains(ObjectIdentifier(entry)) { alive += 1 }
            if let source = w.source.object, !sources.contains(ObjectIdentifier(source)),
                !source.entries.contains(where: { held.contains(ObjectIdentifier($0)) })
            {
                aliveSources += 1
            }
        }
        let stats = (entries: cache.state.entries.count, evicted: cache.state.counters.evictions)
        cache.lock.unlock()
        // The budget holds far fewer than `count` of them: most were evicted and forgotten.
        #expect(stats.entries < count / 2, "\(stats.entries) entries held")
        #expect(alive == 0, "\(alive) entries the cache no longer holds are still alive (\(stats))")
        #expect(aliveSources == 0, "\(aliveSources) images the cache no longer holds are still alive")
    }
}

/// A weak reference.
struct Weak<Object: AnyObject> {
    weak var object: Object?
    init(_ object: Object?) { self.object = object }
}
