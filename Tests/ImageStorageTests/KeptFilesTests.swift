import ImageStorage
import Testing

/// The bookkeeping the S3 originals cache and the derived products share: sizes and their total,
/// the order of last use, and what eviction gives up.
@Suite("Kept files")
struct KeptFilesTests {
    @Test func sizesAreCountedOnceAndReplaced() {
        var kept = KeptFiles<String>()
        kept.insert("a", bytes: 10)
        kept.insert("b", bytes: 20)
        kept.insert("a", bytes: 5)
        #expect(kept.count == 2 && kept.totalBytes == 25)
        let removed = (kept.remove("a"), kept.remove("a"))
        #expect(removed == (true, false))
        #expect(kept.totalBytes == 20 && !kept.contains("a") && kept.contains("b"))
        #expect(kept.keys(where: { $0.hasPrefix("b") }) == ["b"])
    }

    @Test func evictionGivesUpTheLeastRecentlyUsedUntilTheTotalFits() {
        var kept = KeptFiles<String>()
        for name in ["a", "b", "c", "d"] { kept.insert(name, bytes: 10) }
        let used = (kept.use("a"), kept.use("z"))  // a becomes the most recent
        #expect(used == (true, false))
        let (within, over) = (kept.evict(toFit: 40), kept.evict(toFit: 25))
        #expect(within.isEmpty && over == ["b", "c"])
        #expect(kept.totalBytes == 20 && kept.contains("a") && kept.contains("d"))
    }

    @Test func theKeptFileOrElseTheNewestStaysWhateverItsSize() {
        var kept = KeptFiles<String>()
        kept.insert("old", bytes: 10)
        kept.insert("new", bytes: 100)
        let (first, second) = (kept.evict(toFit: 50), kept.evict(toFit: 50))
        #expect(first == ["old"] && second.isEmpty, "the newest stays, though over the budget")
        kept.insert("added", bytes: 30)
        kept.use("new")
        let keeping = kept.evict(toFit: 50, keeping: "added")
        #expect(keeping == ["new"], "the file just added stays, not the newest")
        #expect(kept.totalBytes == 30)
    }
}
