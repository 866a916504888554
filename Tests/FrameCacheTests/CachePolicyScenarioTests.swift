import Testing

@testable import FrameCache

/// The rules of ``CachePolicy``, one row each (a rule with several clauses has a row per
/// clause): a scenario on a fake clock (``PolicyScenario``) and the decision the rule asks for.
/// Each row fails when its rule is taken out of the policy.
@Suite("Cache policy scenarios")
struct CachePolicyScenarioTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let rule: String
        let check: @Sendable () throws -> Void
        var testDescription: String { rule }
    }

    static let rows: [Row] = [
        Row(rule: "1. a waiting request goes before decode-ahead") {
            var s = try PolicyScenario()
            let player = try s.entry("p")
            s.play(player, 0...2)
            s.advance(0.01)
            let oneOff = try s.entry("o", startingAt: 30)
            s.wait(oneOff, 30)
            s.refresh()
            #expect(s.nextJob()?.summary == "o#30!")
        },
        Row(rule: "1. a player's waiting request goes before a one-off's that waited longer") {
            var s = try PolicyScenario()
            let oneOff = try s.entry("o", startingAt: 30)
            s.wait(oneOff, 30)
            s.advance(0.01)
            let player = try s.entry("p")
            s.play(player, 0...2)
            s.wait(player, 3)
            s.refresh()
            #expect(player.waitsAsPlayer && !oneOff.waitsAsPlayer)
            #expect(s.nextJob()?.summary == "p#3!")
        },
        Row(rule: "2. a one-off on an image whose players are about waits out its patience") {
            let (s, player, oneOff) = try PolicyScenario.playerAndOneOff(ready: [3, 4])  // not short of frames
            s.advance(0.05)
            #expect(s.nextJob()?.summary == "m/\(player.rendition.key)#5")
            s.advance(0.05)
            #expect(s.nextJob()?.summary == "m/\(oneOff.rendition.key)#40!")
        },
        Row(rule: "2. while a player of the image is short of frames, a one-off waits the longer patience") {
            let (s, player, oneOff) = try PolicyScenario.playerAndOneOff()
            s.advance(0.1)
            #expect(s.nextJob()?.summary == "m/\(player.rendition.key)#3")
            s.advance(0.4)
            #expect(s.nextJob()?.summary == "m/\(oneOff.rendition.key)#40!")
        },
        Row(rule: "2. a new viewer's frame 0 is not held back") {
            var s = try PolicyScenario()
            let player = try s.entry("m", width: 60)
            s.play(player, 0...2)
            let viewer = try s.entry("m", width: 30)
            s.wait(viewer, 0)
            s.refresh()
            s.advance(0.01)
            #expect(s.nextJob()?.summary == "m/\(viewer.rendition.key)#0!")
        },
        Row(rule: "2. in a run, a player's frame due soon goes before a one-off within its patience") {
            let (s, player, oneOff) = try PolicyScenario.playerAndOneOff()
            s.advance(0.05)
            #expect(s.continuation(of: player)?.summary == "m/\(player.rendition.key)#3")
            s.advance(0.45)  // the longer patience: the player is short of frames
            #expect(s.continuation(of: player)?.summary == "m/\(oneOff.rendition.key)#40!")
        },
        Row(rule: "3. a seek on a played rendition waits as a one-off, its playhead left with the player") {
            var s = try PolicyScenario()
            let played = try s.entry("f")
            s.play(played, 0...10)
            s.wait(played, 60)
            #expect(played.playhead == 10)
            s.advance(0.01)
            let other = try s.entry("q")
            s.play(other, 0...2)
            s.wait(other, 3)
            s.refresh()
            #expect(s.nextJob()?.summary == "q#3!")
        },
        Row(rule: "3. a rendition only sought in is made on demand") {
            var s = try PolicyScenario()
            let sought = try s.entry("f")
            for k in [37, 74, 11, 48] { s.hit(sought, k) }
            s.refresh()
            #expect(sought.onDemand && sought.window == 0)
            #expect(s.nextJob() == nil)
        },
        Row(rule: "4. a one-off is made beside a busy decoder while a player is short of frames") {
            let (s, player, oneOff) = try PolicyScenario.playerAndOneOff()
            player.busy = true  // a thread holds the image's decoder
            s.advance(0.5)  // past the one-off's patience while the player is short
            #expect(s.nextJob()?.summary == "m/\(oneOff.rendition.key)#40! beside")
        },
        Row(rule: "5. a run goes on with the held image's next frame") {
            var s = try PolicyScenario()
            let player = try s.entry("a")
            s.play(player, 0...2)
            s.refresh()
            #expect(s.continuation(of: player)?.summary == "a#3")
        },
        Row(rule: "5. a run ends after maxRun frames") {
            var s = try PolicyScenario()
            let player = try s.entry("a")
            s.play(player, 0...2)
            s.refresh()
            #expect(s.continuation(of: player, frames: s.state.policy.tuning.maxRun) == nil)
        },
        Row(rule: "5. a run ends when another image's frame is due within the margin") {
            var s = try PolicyScenario()
            let held = try s.entry("a")
            s.play(held, 0...2)
            s.cache(held, Array(3...20))  // its next frame due in 1.8 s
            let other = try s.entry("b")
            s.play(other, 0...2)  // its frame 3 due in 0.1 s
            s.refresh()
            #expect(s.continuation(of: held) == nil)
            s.cache(other, Array(3...20))
            #expect(s.continuation(of: held)?.summary == "a#21")
        },
        Row(rule: "5. requests waiting elsewhere end a run, but for the frames just after a waited one") {
            var s = try PolicyScenario()
            let held = try s.entry("a")
            s.play(held, 0...2)
            let oneOff = try s.entry("o", startingAt: 30)
            s.wait(oneOff, 30)
            s.refresh()
            #expect(s.continuation(of: held, sinceWaited: 0)?.summary == "a#3")
            #expect(s.continuation(of: held, sinceWaited: s.state.policy.tuning.aheadOfWaiter) == nil)
            #expect(s.continuation(of: held, sinceWaited: nil) == nil)
        },
        Row(rule: "6. decode-ahead goes earliest deadline first") {
            var s = try PolicyScenario()
            var players: [ImageEntry] = []
            for (n, ready) in [9, 7, 3, 12, 5, 8].enumerated() {
                let player = try s.entry("p\(n)")
                s.play(player, 0...2)
                s.cache(player, Array(3..<ready))
                players.append(player)
            }
            s.refresh()
            #expect(s.nextJob()?.summary == "p2#3")
        },
        Row(rule: "6. a partial window is refilled once the frames ready run down to half of it") {
            var s = try PolicyScenario()
            let player = try s.entry("a")
            s.play(player, 0...2)
            s.refresh(cap: 10)
            s.cache(player, Array(3...7))  // 6 of 10 ready from the playhead
            #expect(s.nextJob() == nil)
            s.hit(player, 3)  // 5 ready
            #expect(s.nextJob()?.summary == "a#8")
        },
        Row(rule: "6. decode-ahead only takes room nobody is about to need") {
            var s = try PolicyScenario(budget: 1 << 20)
            let player = try s.entry("a")
            s.play(player, 0...2)
            let filler = try s.entry("f")
            s.play(filler, 0...2)
            s.refresh()
            #expect(player.isWhole && filler.isWhole)
            // The rest of the room filled with frames inside the filler's window.
            let room = s.state.holdLimit - s.state.heldBytes
            s.cache(filler, Array(3..<128), bytes: room / 125)
            #expect(s.state.holdLimit - s.state.heldBytes < PolicyScenario.frameBytes)
            #expect(s.nextJob() == nil)
        },
        Row(rule: "6. a large image's frames are left to the threads other than the last") {
            var s = try PolicyScenario(budget: 40_000)  // a canvas is more than a quarter of it
            let large = try s.entry("l")
            s.wait(large, 0)
            s.refresh()
            #expect(s.nextJob(largeAllowed: false) == nil)
            #expect(s.nextJob(largeAllowed: true)?.summary == "l#0!")
        },
        Row(rule: "7. after a purge only images asked for again are active") {
            var s = try PolicyScenario()
            let a = try s.entry("a")
            let b = try s.entry("b")
            s.play(a, 0...2)
            s.play(b, 0...2)
            _ = s.state.purge(.warning)
            s.refresh()
            #expect(a.window == 0 && b.window == 0)
            #expect(s.nextJob() == nil)
            s.hit(a, 3)
            s.refresh()
            #expect(a.window > 0 && b.window == 0)
        },
        Row(rule: "7. windows are capped under pressure") {
            var s = try PolicyScenario()
            let a = try s.entry("a")
            s.play(a, 0...2)
            s.refresh(cap: 2)
            #expect(a.window == 2)
        },
        Row(rule: "8. idle images' frames go before frames behind an active playhead") {
            var s = try PolicyScenario()
            let idle = try s.entry("i")
            s.play(idle, 0...5)
            s.advance(31)
            let active = try s.entry("a")
            s.play(active, 0...5)
            s.refresh()
            #expect(s.evicted(toFit: 1) == ["i#5"])
        },
        Row(rule: "8. renditions never played go before played ones") {
            var s = try PolicyScenario()
            let played = try s.entry("m", width: 60)
            s.play(played, 0...5)
            s.advance(1)
            let once = try s.entry("m", width: 30, startingAt: 7)
            s.hit(once, 7)
            s.advance(31)
            s.refresh()
            #expect(s.evicted(toFit: 1) == ["m/\(once.rendition.key)#7"])
        },
        Row(rule: "8. behind a playhead the frame needed again last goes first, the resume anchor last") {
            var s = try PolicyScenario()
            let a = try s.entry("a")
            s.play(a, 0...10)
            s.refresh(cap: 3)
            #expect(s.evicted(toFit: 1) == ["a#8"])
            #expect(s.evicted(toFit: 9 * PolicyScenario.frameBytes).last == "a#9")
        },
        Row(rule: "8. posters stay unless the reach includes them") {
            var s = try PolicyScenario()
            let idle = try s.entry("i")
            s.hit(idle, 0)
            s.hit(idle, 5)
            s.advance(31)
            s.refresh()
            #expect(s.evicted(toFit: 2 * PolicyScenario.frameBytes) == ["i#5"])
            #expect(s.evicted(toFit: 2 * PolicyScenario.frameBytes, reach: .posters) == ["i#5", "i#0"])
        },
        Row(rule: "8. decoders not in use go before resume anchors") {
            var s = try PolicyScenario()
            let a = try s.entry("a")
            s.play(a, 0...10)
            let b = try s.entry("b")
            s.play(b, 0...2)
            s.giveDecoder(b)
            s.refresh(cap: 3)
            let order = s.evicted(toFit: 9 * PolicyScenario.frameBytes + b.rendererBytes)
            #expect(Array(order.suffix(2)) == ["b decoder", "b#1"])
        },
        Row(rule: "9. an image not asked for within the active time has no window") {
            var s = try PolicyScenario()
            let a = try s.entry("a")
            s.play(a, 0...2)
            s.refresh()
            #expect(a.window == a.frameCount)
            s.advance(31)
            s.refresh()
            #expect(a.window == 0 && s.nextJob() == nil)
        },
        Row(rule: "9. of an image's played renditions, only the most recently played are decoded ahead") {
            var s = try PolicyScenario { $0.decodeAheadRenditions = 1 }
            let older = try s.entry("m", width: 60)
            s.play(older, 0...2)
            s.advance(0.1)
            let newer = try s.entry("m", width: 30)
            s.play(newer, 0...2)
            s.refresh()
            #expect(newer.window > 0 && !newer.onDemand)
            #expect(older.window == 0 && older.onDemand && older.ridingFrames > 0)
        },
        Row(rule: "9. with many images active, a new one gets its lookahead at once, everyone's windows later") {
            var s = try PolicyScenario()
            for n in 0..<100 { s.hit(try s.entry("a\(n)"), 0) }
            s.refresh()
            let late = try s.entry("x")
            s.hit(late, 0)
            let lookahead = s.state.policy.window.lookahead(of: s.state.policy.demand(of: late))
            #expect(late.isListedActive && lookahead < late.frameCount)
            #expect(late.window == lookahead, "decoded ahead at once, over its lookahead")
            // Once one in 8 of the active images changed, every window is worked out again.
            for n in 0..<20 { s.hit(try s.entry("y\(n)"), 0) }
            #expect(late.window == late.frameCount)
        },
        Row(rule: "9. the working reserve is set aside for the decode threads") {
            var s = try PolicyScenario { $0.decodeThreads = 2 }
            let a = try s.entry("a")
            s.hit(a, 0)
            s.refresh()
            let tuning = s.state.policy.tuning
            #expect(s.state.workingReserve == 2 * tuning.workingCanvasesPerThread * a.decodedFrameBytes)
        },
    ]

    @Test(arguments: rows)
    func rule(_ row: Row) throws {
        try row.check()
    }

    /// The rules hold in a cache of 100,000 idle images (each with its poster and one more
    /// frame, filling the budget), and each decision about a new image looks at the few entries
    /// it concerns (``CacheIndex/examined``), not at the 100,000.
    @Test func aCacheOfAHundredThousandIdleImages() throws {
        let count = 100_000
        let frame = 100
        let reserve = CachePolicy.Tuning().workingCanvasesPerThread * 30 * 20 * 4
        let small = try TestImages.small()
        // Each image costs its two frames and its entry (``ImageEntry/overheadBytes``).
        let entry = ImageEntry.overheadBytes(frameCount: small.frameCount, hitTables: 0)
        var s = try PolicyScenario(budget: reserve + count * (2 * frame + entry) + frame / 2, image: small)
        var idle: [ImageEntry] = []
        idle.reserveCapacity(count)
        for n in 0..<count {
            let entry = try s.entry("i\(n)")
            s.cache(entry, [0, 1], bytes: frame)
            idle.append(entry)
        }
        s.advance(31)
        s.refresh()
        #expect(s.state.index.active.isEmpty && s.state.index.idle.count == count)

        // A cold request for another image: it is made first, and active at once.
        s.state.index.examined = 0
        let cold = try s.entry("new")
        s.wait(cold, 0)
        #expect(cold.isListedActive && cold.window == cold.frameCount)
        #expect(s.nextJob()?.summary == "new#0!")
        // Its frame needs room: the least recently used idle image's frame goes, its poster stays.
        #expect(s.evicted(toFit: frame) == ["i0#1"])
        #expect(s.evicted(toFit: 3 * frame) == ["i0#1", "i1#1", "i2#1"])
        // The windows, worked out again, concern the one active image.
        s.refresh()
        #expect(cold.window == cold.frameCount && idle.allSatisfy { $0.window == 0 })
        #expect(s.state.index.examined < 100, "\(s.state.index.examined) entries looked at")

        // The idle images' active time is long past: nothing is decoded for them, and one asked
        // for again is active again, by itself.
        s.state.index.examined = 0
        s.hit(idle[500], 0)
        s.refresh()
        #expect(idle[500].window > 0 && idle[501].window == 0)
        #expect(s.nextJob()?.summary == "new#0!")
        #expect(s.state.index.examined < 100, "\(s.state.index.examined) entries looked at")
    }

    /// A budget full of 100,000 images asked for within their active time (each holding its
    /// poster and the frame decoded ahead of it, as a library's cold frames leave them): room
    /// inside the windows is taken from the least recently used image, and finding it looks at
    /// that image, not at the 100,000.
    @Test func aCacheFullOfAHundredThousandActiveImages() throws {
        let count = 100_000
        let frame = 100
        let reserve = CachePolicy.Tuning().workingCanvasesPerThread * 30 * 20 * 4
        let small = try TestImages.small()
        let entry = ImageEntry.overheadBytes(frameCount: small.frameCount, hitTables: 0)
        // Room for every window in full (the cap leaves them whole), so that what eviction takes
        // must come from inside them; ``PolicyScenario/evicted(toFit:reach:)`` asks past the limit.
        var s = try PolicyScenario(budget: reserve + 4 * count * (2 * frame + entry), image: small)
        var active: [ImageEntry] = []
        active.reserveCapacity(count)
        for n in 0..<count {
            let entry = try s.entry("a\(n)")
            s.cache(entry, [0, 1], bytes: frame)
            s.hit(entry, 0)
            active.append(entry)
        }
        s.refresh()
        #expect(s.state.index.active.count == count && s.state.index.idle.count == 0)
        #expect(active.allSatisfy { $0.window == $0.frameCount })

        s.state.index.examined = 0
        // Nothing outside the windows: nothing to take there.
        #expect(s.evicted(toFit: frame).isEmpty)
        // Inside them: the frame ahead of the least recently used, then the next; posters stay.
        #expect(s.evicted(toFit: frame, reach: .inWindows) == ["a0#1"])
        #expect(s.evicted(toFit: 3 * frame, reach: .inWindows) == ["a0#1", "a1#1", "a2#1"])
        #expect(s.state.index.examined < 100, "\(s.state.index.examined) entries looked at")

        // The first half's frames ahead taken (as earlier evictions left them): the next room
        // comes from the first image still holding one, without passing the emptied half again.
        for entry in active[..<(count / 2)] { s.state.evict(entry, frame: 1) }
        s.state.index.examined = 0
        #expect(s.evicted(toFit: frame, reach: .inWindows) == ["a\(count / 2)#1"])
        #expect(s.evicted(toFit: frame, reach: .posters) == ["a\(count / 2)#1"])
        #expect(s.state.index.examined < 100, "\(s.state.index.examined) entries looked at")
    }
}
