import FlipbookTestSupport
import Foundation
import Testing

@testable import FlipbookService

@Suite("Settings")
struct SettingsTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let configFile = repository.appendingPathComponent("Config/flipbook.json").path

    @Test func theShippedConfigFileHoldsEveryKeyWithItsDefault() async throws {
        let loaded = try await SettingsLoader(configPath: Self.configFile, environment: [:]).load()
        #expect(loaded.warnings.isEmpty, "\(loaded.warnings)")
        #expect(loaded.settings == FlipbookSettings())
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.configFile))) as! [String: Any]
        for key in SettingKeys.all {
            var node: Any? = json
            for part in key.name.split(separator: ".").map(String.init) {
                node = (node as? [String: Any])?[part]
            }
            #expect(node != nil, "Config/flipbook.json lacks \(key.name)")
        }
    }

    @Test func environmentOverridesTheFileAndFlagsOverrideTheEnvironment() async throws {
        let environment = [
            "FLIPBOOK_SERVER_PORT": "9001", "FLIPBOOK_CACHE_MAXBYTES": "123456",
            "FLIPBOOK_STORAGE_LIBRARYDIRS": "a, b", "FLIPBOOK_AUTH_ADMINTOKEN": "s3",
            "FLIPBOOK_SERVER_TRUSTEDPROXIES": "10.0.0.0/8,::1", "FLIPBOOK_LOG_ACCESSLOG": "false",
            "FLIPBOOK_CACHE_MEMORYFRACTION": "0.5",
        ]
        let fromEnvironment = try await SettingsLoader(configPath: Self.configFile, environment: environment).load().settings
        #expect(fromEnvironment.server.port == 9001)
        #expect(fromEnvironment.cache.maxBytes == 123_456)
        #expect(fromEnvironment.storage.libraryDirs == ["a", "b"])
        #expect(fromEnvironment.auth.adminToken == "s3")
        #expect(fromEnvironment.server.trustedProxies == ["10.0.0.0/8", "::1"])
        #expect(fromEnvironment.log.accessLog == false)
        #expect(fromEnvironment.cache.memoryFraction == 0.5)
        let withFlags = try await SettingsLoader(
            configPath: Self.configFile, environment: environment,
            overrides: ["server.port": "9002", "storage.dataDir": "/srv"]
        ).load().settings
        #expect(withFlags.server.port == 9002)
        #expect(withFlags.storage.dataDir == "/srv")
        #expect(withFlags.cache.maxBytes == 123_456)
    }

    @Test func aFileValueOverridesTheDefault() async throws {
        let path = ScratchDirectory.newPath("settings") + ".json"
        try Data(#"{"server": {"port": 7000}, "cache": {"pngCompressionLevel": 6}, "sever": {"port": 1}}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        let loaded = try await SettingsLoader(configPath: path, environment: [:]).load()
        #expect(loaded.settings.server.port == 7000)
        #expect(loaded.settings.cache.pngCompressionLevel == 6)
        #expect(loaded.settings.server.host == "0.0.0.0")
        #expect(loaded.warnings == ["ignoring unknown key sever.port in \(path)"])
    }

    @Test func malformedValuesAreErrorsThatNameTheKey() async throws {
        await #expect {
            try await SettingsLoader(configPath: Self.configFile, environment: ["FLIPBOOK_SERVER_PORT": "eighty"]).load()
        } throws: { "\($0)".contains("server.port") && "\($0)".contains("FLIPBOOK_SERVER_PORT") }
        await #expect {
            try await SettingsLoader(configPath: Self.configFile, environment: ["FLIPBOOK_SERVER_PORT": "70000"]).load()
        } throws: { "\($0)".contains("server.port") }
        await #expect {
            try await SettingsLoader(configPath: Self.configFile, environment: ["FLIPBOOK_LOG_FORMAT": "xml"]).load()
        } throws: { "\($0)".contains("log.format") }
        await #expect {
            try await SettingsLoader(configPath: Self.configFile, environment: [:], overrides: ["cache.maxbytes": "1"]).load()
        } throws: { "\($0)".contains("cache.maxbytes") }
        await #expect {
            try await SettingsLoader(configPath: "/nonexistent/flipbook.json", environment: [:]).load()
        } throws: { "\($0)".contains("does not exist") }
        await #expect {
            try await SettingsLoader(
                configPath: Self.configFile,
                environment: ["FLIPBOOK_SERVER_TRUSTEDPROXIES": "example.com"]
            ).load()
        } throws: { "\($0)".contains("trustedProxies") }
        let warned = try await SettingsLoader(configPath: Self.configFile, environment: ["FLIPBOOK_SERVER_PROT": "1"]).load()
        #expect(warned.warnings == ["ignoring unknown environment variable FLIPBOOK_SERVER_PROT"])
    }

    @Test func environmentNamesFollowTheDocumentedRule() {
        #expect(SettingKeys.key(named: "cache.maxBytes")?.environmentName == "FLIPBOOK_CACHE_MAXBYTES")
        #expect(SettingKeys.key(named: "auth.adminToken")?.environmentName == "FLIPBOOK_AUTH_ADMINTOKEN")
        #expect(SettingKeys.key(named: "server.port")?.environmentName == "FLIPBOOK_SERVER_PORT")
        #expect(SettingsLoader.providerName("cache.maxBytes") == "CACHE_MAX_BYTES")
        #expect(Set(SettingKeys.all.map(\.name)).count == SettingKeys.all.count)
    }

    @Test func theConfigurationPageListsEverySettingAsTheCodeDescribesIt() throws {
        let path = Self.repository.appendingPathComponent("docs/configuration.md").path
        let page = try String(contentsOfFile: path, encoding: .utf8)
        guard let begin = page.range(of: "<!-- BEGIN settings"), let end = page.range(of: "<!-- END settings -->"),
            let afterMarker = page[begin.upperBound...].firstIndex(of: "\n"), afterMarker < end.lowerBound
        else {
            Issue.record("docs/configuration.md lacks its settings markers")
            return
        }
        let onThePage = page[afterMarker..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        let fromTheCode = SettingsReference.markdown().trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(onThePage == fromTheCode, "docs/configuration.md differs from the settings in code: run `make docs`")
    }

    @Test func theReferenceGivesEveryKeyItsVariableDefaultAndMeaning() {
        for key in SettingKeys.all {
            #expect(!key.summary.trimmingCharacters(in: .whitespaces).isEmpty, "\(key.name) says nothing of what it does")
        }
        let tables = SettingsReference.markdown()
        #expect(tables.contains("| `cache.maxBytes` | `FLIPBOOK_CACHE_MAXBYTES` | `0` | the frame cache's byte budget;"))
        #expect(tables.contains("| `cache.memoryFraction` | `FLIPBOOK_CACHE_MEMORYFRACTION` | `0.2` |"))
        #expect(tables.contains("| `server.drainTimeoutSeconds` | `FLIPBOOK_SERVER_DRAINTIMEOUTSECONDS` | `20` |"))
        #expect(tables.contains("| `storage.libraryDirs` | `FLIPBOOK_STORAGE_LIBRARYDIRS` | `[\"Samples\"]` |"))
        #expect(tables.contains("| `auth.adminToken` | `FLIPBOOK_AUTH_ADMINTOKEN` | `\"\"` |"))
        #expect(tables.contains("empty = those answer 403. Secret: never logged |"))
        #expect(tables.components(separatedBy: "\n| `").count - 1 == SettingKeys.all.count)
        let text = SettingsReference.text()
        #expect(text.contains("log.format = text    (FLIPBOOK_LOG_FORMAT)\n    `text` or `json`"))
    }

    @Test func trustedProxyRanges() {
        let range = IPAddressRange("10.1.0.0/16")
        #expect(range?.contains("10.1.200.3") == true)
        #expect(range?.contains("10.2.0.1") == false)
        #expect(range?.contains("::ffff:10.1.0.9") == true)
        #expect(IPAddressRange("::1")?.contains("::1") == true)
        #expect(IPAddressRange("fd00::/8")?.contains("fd12::5") == true)
        #expect(IPAddressRange("300.1.1.1") == nil)
        #expect(IPAddressRange("10.0.0.0/33") == nil)
    }
}
