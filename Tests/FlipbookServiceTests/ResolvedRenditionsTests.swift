import AnimatedImage
import Testing

@testable import FlipbookService

/// The per-loop memo of resolved rendition queries: one entry per content and query, one answer
/// per outcome of `Accept` when negotiated, bounded in size and query length.
@Suite("Resolved renditions")
struct ResolvedRenditionsTests {
    static func resolved(_ width: Int, _ format: FrameFormat = .png, negotiated: Bool = false) -> ResolvedRenditions.Resolved {
        let rendition = FrameRendition(scaledWidth: width, scaledHeight: width, format: format)
        return .init(rendition: rendition, cacheKey: "c/\(rendition.key)", negotiated: negotiated)
    }

    @Test func anEntryIsPerContentQueryAndLoop() {
        let memo = ResolvedRenditions(loops: 2)
        memo.remember(Self.resolved(80), content: "a", query: "width=80", loop: 0)
        #expect(memo.value(content: "a", query: "width=80", loop: 0) { true }?.cacheKey == "c/80x80-png")
        #expect(memo.value(content: "b", query: "width=80", loop: 0) { true } == nil)
        #expect(memo.value(content: "a", query: "width=80&x=1", loop: 0) { true } == nil)
        #expect(memo.value(content: "a", query: "width=80", loop: 1) { true } == nil)
        // A query taken out of a longer target is the same key as the query alone.
        let target = "/frames/a/3?width=80"
        let query = target[target.index(after: target.firstIndex(of: "?")!)...]
        #expect(memo.value(content: "a", query: query, loop: 0) { true }?.rendition.scaledWidth == 80)
    }

    @Test func aNegotiatedQueryKeepsAnAnswerPerOutcome() {
        let memo = ResolvedRenditions(loops: 1)
        var asked = 0
        memo.remember(Self.resolved(80, .webp, negotiated: true), content: "a", query: "width=80&format=auto", loop: 0)
        #expect(
            memo.value(content: "a", query: "width=80&format=auto", loop: 0) {
                asked += 1; return false
            } == nil)
        memo.remember(Self.resolved(80, .png, negotiated: true), content: "a", query: "width=80&format=auto", loop: 0)
        let png = memo.value(content: "a", query: "width=80&format=auto", loop: 0) {
            asked += 1; return false
        }
        let webp = memo.value(content: "a", query: "width=80&format=auto", loop: 0) {
            asked += 1; return true
        }
        #expect(png?.rendition.format == .png && png?.negotiated == true)
        #expect(webp?.rendition.format == .webp && webp?.negotiated == true)
        #expect(asked == 3)
        // A query that was not negotiated never asks about Accept.
        memo.remember(Self.resolved(80, .webp), content: "a", query: "width=80&format=webp", loop: 0)
        #expect(
            memo.value(content: "a", query: "width=80&format=webp", loop: 0) {
                asked += 1; return false
            } != nil)
        #expect(asked == 3)
    }

    @Test func theTableIsBoundedAndLongQueriesAreNotKept() {
        let memo = ResolvedRenditions(loops: 1)
        let long = String(repeating: "x", count: ResolvedRenditions.maxQueryBytes) + "&width=80"
        memo.remember(Self.resolved(80), content: "a", query: Substring(long), loop: 0)
        #expect(memo.value(content: "a", query: Substring(long), loop: 0) { false } == nil)
        // Direct-mapped: however many queries come, at most `slots` are held, the newest always.
        let queries = (1...(4 * ResolvedRenditions.slots)).map { Substring("width=\($0)") }
        for (n, query) in queries.enumerated() {
            memo.remember(Self.resolved(n + 1), content: "a", query: query, loop: 0)
            #expect(memo.value(content: "a", query: query, loop: 0) { false }?.rendition.scaledWidth == n + 1)
        }
        let held = queries.filter { memo.value(content: "a", query: $0, loop: 0) { false } != nil }
        #expect(held.count <= ResolvedRenditions.slots && held.count > ResolvedRenditions.slots / 2, "\(held.count)")
        // What is held is right.
        for query in held {
            let width = Int(query.dropFirst("width=".count))!
            #expect(memo.value(content: "a", query: query, loop: 0) { false }?.rendition.scaledWidth == width)
        }
    }
}
