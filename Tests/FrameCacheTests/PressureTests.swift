import AnimatedImage
import FlipbookTestSupport
import Foundation
import SystemResources
import Testing

@testable import FrameCache

@Suite("Memory pressure", .serialized, .ownThreads)
struct PressureTests {
    @Test func scheduleOfAWarning() {
        var controller = PressureController()
        #expect(controller.windowCap(at: 0) == nil)
        controller.signal(.warning, at: 100)
        #expect(controller.windowCap(at: 100) == 1)
        #expect(controller.windowCap(at: 101.9) == 1)
        #expect(controller.windowCap(at: 102.1) == 2)
        #expect(controller.windowCap(at: 104.9) == 2)
        #expect(controller.windowCap(at: 105.1) == nil)
        #expect(controller.level(at: 101) == .warning)
        #expect(controller.level(at: 106) == .normal)
    }

    @Test func threeWarningsWithinAMinuteMeanOnDemandUntilAQuietMinute() {
        var controller = PressureController()
        controller.signal(.warning, at: 0)
        controller.signal(.warning, at: 20)
        #expect(controller.windowCap(at: 30) == nil)
        controller.signal(.warning, at: 40)
        #expect(controller.isOnDemand(at: 41))
        #expect(controller.windowCap(at: 90) == 1)
        #expect(controller.windowCap(at: 99.9) == 1)
        #expect(controller.windowCap(at: 100.1) == nil)
        #expect(controller.isOnDemand(at: 100.1) == false)
    }

    @Test func warningsFarApartDoNotAddUp() {
        var controller = PressureController()
        controller.signal(.warning, at: 0)
        controller.signal(.warning, at: 61)
        controller.signal(.warning, at: 122)
        #expect(controller.isOnDemand(at: 123) == false)
        #expect(controller.windowCap(at: 128) == nil)
    }

    @Test func cachePurgesAndRegrowsOnSchedule() throws {
        let clock = ManualClock()
        let image = try TestImages.medium()
        let cache = FrameCache(configuration: FrameCacheConfiguration(budgetBytes: 64 << 20, decodeThreads: 1), clock: clock)
        defer { cache.shutdown() }
        let entry = CacheableImage(id: "m", image: image)
        _ = cache.fetch(entry, 10)
        cache.waitUntilIdle()
        #expect(cache.stats().images[0].cachedFrames == image.frameCount)

        cache.memoryPressure(.warning, source: "test")
        var stats = cache.stats()
        #expect(stats.pressure.level == .warning)
        #expect(stats.pressure.windowCap == 1)
        // Only the playhead frame and the poster remain.
        #expect(cache.cachedFrameIndices(of: "m") == [0, 10])
        #expect(stats.purges.last?.level == .warning)
        #expect(stats.purges.last!.freedBytes > 0)

        // Within 2 s: window 1, nothing is decoded ahead.
        clock.advance(by: 1.5)
        _ = cache.fetch(entry, 11)
        cache.waitUntilIdle()
        #expect(cache.stats().images[0].window == 1)
        #expect(cache.cachedFrameIndices(of: "m").contains(12) == false)

        // After 2 s: window 2.
        clock.advance(by: 1)
        _ = cache.fetch(entry, 12)
        cache.waitUntilIdle()
        #expect(cache.stats().images[0].window == 2)
        #expect(cache.cachedFrameIndices(of: "m").contains(13))
        #expect(cache.cachedFrameIndices(of: "m").contains(14) == false)

        // Three seconds later: the full window again.
        clock.advance(by: 3)
        _ = cache.fetch(entry, 13)
        cache.waitUntilIdle()
        stats = cache.stats()
        #expect(stats.images[0].window == image.frameCount)
        #expect(stats.pressure.level == .normal)
        #expect(stats.images[0].cachedFrames == image.frameCount)
    }

    @Test func criticalPurgesAllButPosters() throws {
        let cache = FrameCache(configuration: FrameCacheConfiguration(budgetBytes: 64 << 20, decodeThreads: 2))
        defer { cache.shutdown() }
        for (n, image) in [try TestImages.medium(), try TestImages.small()].enumerated() {
            _ = cache.fetch(CacheableImage(id: "i\(n)", image: image), 5)
        }
        cache.waitUntilIdle()
        cache.memoryPressure(.critical, source: "test")
        let stats = cache.stats()
        #expect(stats.pressure.level == .critical)
        #expect(cache.cachedFrameIndices(of: "i0") == [0])
        #expect(cache.cachedFrameIndices(of: "i1") == [0])
        #expect(stats.decoderBytes == 0)
        #expect(stats.usedBytes == stats.frameBytes + stats.entryBytes)
    }

    /// After a critical purge nothing is decoded for an image until someone asks for it again:
    /// not while the windows are capped, not after they regrow. An image asked for again is
    /// decoded for again; the others keep their posters only.
    @Test func aCriticalPurgeStaysPurgedForImagesNobodyAsksFor() throws {
        let clock = ManualClock()
        let cache = FrameCache(configuration: FrameCacheConfiguration(budgetBytes: 64 << 20, decodeThreads: 2), clock: clock)
        defer { cache.shutdown() }
        let images = [
            CacheableImage(id: "i0", image: try TestImages.medium()), CacheableImage(id: "i1", image: try TestImages.small()),
        ]
        for image in images { _ = cache.fetch(image, 5) }
        cache.waitUntilIdle()
        #expect(cache.cachedFrameIndices(of: "i0").count > 1)

        cache.memoryPressure(.critical, source: "test")
        let decodesAtPurge = cache.stats().decodes
        for step in [0.5, 2.0, 3.0, 10.0] {  // capped at 1, then 2, then unrestricted
            clock.advance(by: step)
            cache.waitUntilIdle()
            let stats = cache.stats()
            #expect(cache.cachedFrameIndices(of: "i0") == [0], "\(step) s on")
            #expect(cache.cachedFrameIndices(of: "i1") == [0], "\(step) s on")
            #expect(stats.decoderBytes == 0)
            #expect(stats.decodes == decodesAtPurge)
            #expect(stats.images.allSatisfy { $0.window == 0 })
        }

        // Asked for again: that image is decoded (and ahead), the other stays purged.
        #expect(cache.fetch(images[1], 3).frame?.index == 3)
        cache.waitUntilIdle()
        #expect(cache.cachedFrameIndices(of: "i1").count == images[1].frameCount)
        #expect(cache.cachedFrameIndices(of: "i0") == [0])
        #expect(cache.stats().images.first { $0.id == "i0" }?.decoderBytes == 0)
    }

    /// After a warning, windows regrow only for images asked for since: an image nobody asks
    /// for keeps what the purge left.
    @Test func afterAWarningWindowsRegrowOnlyForImagesAskedForAgain() throws {
        let clock = ManualClock()
        let cache = FrameCache(configuration: FrameCacheConfiguration(budgetBytes: 64 << 20, decodeThreads: 2), clock: clock)
        defer { cache.shutdown() }
        let images = [
            CacheableImage(id: "a", image: try TestImages.medium()), CacheableImage(id: "b", image: try TestImages.medium()),
        ]
        for image in images { _ = cache.fetch(image, 5) }
        cache.waitUntilIdle()
        cache.memoryPressure(.warning, source: "test")
        #expect(cache.cachedFrameIndices(of: "b") == [0, 5])
        clock.advance(by: 2.5)  // windows of 2 now
        _ = cache.fetch(images[0], 6)
        cache.waitUntilIdle()
        #expect(cache.cachedFrameIndices(of: "a").contains(7))
        #expect(cache.cachedFrameIndices(of: "b") == [0, 5])
        clock.advance(by: 3)  // unrestricted
        cache.waitUntilIdle()
        #expect(cache.cachedFrameIndices(of: "b") == [0, 5])
    }

    @Test func cgroupLevels() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cgroup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func write(_ name: String, _ text: String) throws {
            try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let memory = CgroupMemory(root: dir.path)
        let settings = MemoryPressureMonitor.Settings()
        try write("memory.max", "max\n")
        try write("memory.current", "500\n")
        #expect(memory.limit == nil)
        #expect(MemoryPressureMonitor.level(of: memory, settings: settings) == .normal)
        try write("memory.max", "1000\n")
        #expect(MemoryPressureMonitor.level(of: memory, settings: settings) == .normal)
        try write("memory.current", "900\n")
        #expect(MemoryPressureMonitor.level(of: memory, settings: settings) == .warning)
        try write("memory.current", "990\n")
        #expect(MemoryPressureMonitor.level(of: memory, settings: settings) == .critical)
        try write("memory.current", "100\n")
        try write(
            "memory.pressure", "some avg10=35.50 avg60=1.00 avg300=0.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
        )
        #expect(memory.pressureSomeAvg10 == 35.5)
        #expect(MemoryPressureMonitor.level(of: memory, settings: settings) == .warning)

        // The monitor raises it on the cache, once per repeat period.
        let cache = FrameCache(configuration: FrameCacheConfiguration(budgetBytes: 1 << 20, decodeThreads: 1))
        defer { cache.shutdown() }
        var monitorSettings = settings
        monitorSettings.cgroupRoot = dir.path
        let monitor = MemoryPressureMonitor(cache: cache, settings: monitorSettings)
        monitor.check(now: Date())
        monitor.check(now: Date())
        #expect(cache.stats().purges.count == 1)
        #expect(cache.stats().purges[0].source == "cgroup")
    }

    @Test func defaultBudgetFollowsTheLimits() {
        let limits = MemoryLimits(limitBytes: 1000 << 20, availableBytes: 100 << 20, fromCgroup: true)
        #expect(limits.defaultCacheBudget == 60 << 20)
        let roomy = MemoryLimits(limitBytes: 1000 << 20, availableBytes: 900 << 20, fromCgroup: false)
        #expect(roomy.defaultCacheBudget == 200 << 20)
        let detected = MemoryLimits.detect()
        #expect(detected.limitBytes > 0)
        #expect(detected.availableBytes > 0)
    }

    @Test func theProcessCgroupIsFoundFromProcSelfCgroup() throws {
        let mount = FileManager.default.temporaryDirectory.appendingPathComponent("cgmount-\(UUID().uuidString)")
        let own = mount.appendingPathComponent("system.slice/flipbook.service")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: mount) }
        let selfFile = mount.appendingPathComponent("self-cgroup")
        try "0::/system.slice/flipbook.service\n".write(to: selfFile, atomically: true, encoding: .utf8)
        // No memory files there yet: the mount point itself.
        #expect(CgroupMemory.processRoot(mount: mount.path, selfCgroup: selfFile.path) == mount.path)
        try "1073741824\n".write(to: own.appendingPathComponent("memory.max"), atomically: true, encoding: .utf8)
        #expect(CgroupMemory.processRoot(mount: mount.path, selfCgroup: selfFile.path) == own.path)
        #expect(CgroupMemory(root: own.path).limit == 1 << 30)
        #expect(CgroupMemory.processRoot(mount: mount.path, selfCgroup: "/nonexistent") == mount.path)
    }
}
