import Foundation
import Testing

@testable import FlipbookService

/// `sources.*` and `security.*`: read from the environment as documented, refused when malformed
/// (keys named by position, never by value).
struct SourceSettingsTests {
    static let configFile = SettingsTests.configFile

    @Test func environmentListsAndDefaults() async throws {
        let defaults = try await SettingsLoader(configPath: Self.configFile, environment: [:]).load().settings
        #expect(defaults.sources == FlipbookSettings.Sources())
        #expect(defaults.security.signedRoutes == ["renditions", "previews", "storyboards", "sources"])
        let environment = [
            "FLIPBOOK_SECURITY_URLKEYS": "0a0b:0c,0d0e:0f", "FLIPBOOK_SOURCES_ALLOWEDNETWORKS": "127.0.0.0/8,::1",
            "FLIPBOOK_SOURCES_ALLOWEDPREFIXES": "https://cdn.example/gifs/", "FLIPBOOK_SOURCES_MAXREDIRECTS": "1",
        ]
        let loaded = try await SettingsLoader(configPath: Self.configFile, environment: environment).load().settings
        #expect(loaded.security.urlKeys == ["0a0b:0c", "0d0e:0f"])
        #expect(loaded.security.signingKeys.count == 2)
        #expect(loaded.sources.allowedNetworks == ["127.0.0.0/8", "::1"])
        #expect(loaded.sources.allowedPrefixes == ["https://cdn.example/gifs/"])
        #expect(loaded.sources.maxRedirects == 1)
        let fetcher = loaded.sources.fetcher(maxFileBytes: 1000)
        #expect(fetcher.maxBytes == 1000 && fetcher.policy.allowedNetworks.count == 2)
    }

    @Test(arguments: [
        ("FLIPBOOK_SECURITY_URLKEYS", "nothex:00", "security.urlKeys: entry 1"),
        ("FLIPBOOK_SECURITY_URLKEYS", "00:00,abc", "security.urlKeys: entry 2"),
        ("FLIPBOOK_SECURITY_SIGNEDROUTES", "frames,everything", "'everything'"),
        ("FLIPBOOK_SOURCES_ALLOWEDNETWORKS", "10.0.0.1/8", "'10.0.0.1/8'"),
        ("FLIPBOOK_SOURCES_ALLOWEDPREFIXES", "ftp://x/", "'ftp://x/'"),
        ("FLIPBOOK_SOURCES_TIMEOUTSECONDS", "0", "sources.timeoutSeconds"),
        ("FLIPBOOK_SOURCES_MAXREDIRECTS", "-1", "sources.maxRedirects"),
    ])
    func malformedValuesStopStartUp(_ name: String, _ value: String, _ message: String) async {
        await #expect {
            try await SettingsLoader(configPath: Self.configFile, environment: [name: value]).load()
        } throws: { "\($0)".contains(message) && !"\($0)".contains("nothex") }
    }
}
