@testable import FlipbookService
import Testing

@Suite("Settings")
struct SettingsTests {
    @Test func defaultsMatchTheBrief() {
        let settings = FlipbookSettings()
        #expect(settings.server.port == 8080)
        #expect(settings.cache.wholeAnimationBytes == 10_000_000)
    }
}
