import Configuration
import Foundation
import SystemResources
import Testing

@testable import FlipbookService

/// What replaced Foundation's text and error helpers in the service (so that ICU is not linked)
/// gives what Foundation gave.
@Suite("Text without Foundation")
struct FoundationFreeTextTests {
    @Test func trimmingMatchesFoundationsCharacterSets() {
        let samples = [
            "  a b  ", "\ta\u{00A0}", "\u{3000}x\u{2003}", " \n x \r\n", "\u{2028}y\u{0085}", "", "   ", "\t\n", "é ",
        ]
        for text in samples {
            #expect(text.trimmingSpaces() == text.trimmingCharacters(in: .whitespaces), "\(Array(text.unicodeScalars))")
            #expect(
                text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines),
                "\(Array(text.unicodeScalars))")
        }
    }

    @Test func percentDecodingIsStrictAsFoundationsWas() {
        let samples = ["na%C3%AFve.gif", "a%20b", "100%", "%zz", "%C3", "%E2%82%AC", "plain", "%2", "%41%42"]
        for text in samples {
            #expect(DisplayName.strictPercentDecoding(text[...]) == text.removingPercentEncoding, "\(text)")
        }
    }

    @Test func fixedDecimalsMatchPrintf() {
        for value in [0.0, 0.004, 0.0051, 0.07, 1.5, 12.3456, 123456.789, -0.25, -3.14159, 9.999] {
            for places in [0, 1, 2, 3] {
                #expect(DecimalText.fixed(value, places: places) == String(format: "%.\(places)f", value), "\(value) \(places)")
            }
        }
    }

    @Test func aFileErrorIsTheSystemsWords() throws {
        do {
            try FileManager.default.createDirectory(atPath: "/proc/flipbook/x", withIntermediateDirectories: true)
            Issue.record("created a directory under /proc")
        } catch {
            #expect(ErrorText.of(error) == "No such file or directory")
        }
        #expect(ErrorText.of(SettingsFileError(description: "why")) == "why")
    }
}

/// The settings file read without Foundation's JSONSerialization: the conversions of
/// swift-configuration's JSONSnapshot.
@Suite("Settings file")
struct SettingsFileSnapshotTests {
    static func snapshot(_ json: String) throws -> SettingsFileSnapshot {
        let bytes = Array(json.utf8)
        return try bytes.withUnsafeBytes { buffer in
            try SettingsFileSnapshot(data: RawSpan(_unsafeBytes: buffer), providerName: "test", parsingOptions: .default)
        }
    }

    static func value(_ snapshot: SettingsFileSnapshot, _ key: String, _ type: ConfigType) -> ConfigContent? {
        let key = AbsoluteConfigKey(key.split(separator: ".").map(String.init))
        return try? snapshot.value(forKey: key, type: type).value?.content
    }

    @Test func nestedObjectsAreDottedKeysAndNumbersConvert() throws {
        let file = try Self.snapshot(
            #"{"server": {"port": 8080, "host": "0.0.0.0"}, "cache": {"ratio": 0.5, "whole": 2.0, "on": true},"#
                + #" "list": ["a", "b"], "empty": [], "mixed": ["a", 1], "none": null}"#)
        #expect(Self.value(file, "server.port", .int) == .int(8080))
        #expect(Self.value(file, "server.port", .double) == .double(8080))
        #expect(Self.value(file, "server.host", .string) == .string("0.0.0.0"))
        #expect(Self.value(file, "server.host", .int) == nil)
        #expect(Self.value(file, "cache.ratio", .double) == .double(0.5))
        #expect(Self.value(file, "cache.ratio", .int) == nil)
        #expect(Self.value(file, "cache.whole", .int) == .int(2))
        #expect(Self.value(file, "cache.on", .bool) == .bool(true))
        #expect(Self.value(file, "cache.on", .int) == .int(1))
        #expect(Self.value(file, "list", .stringArray) == .stringArray(["a", "b"]))
        #expect(Self.value(file, "empty", .stringArray) == .stringArray([]))
        #expect(Self.value(file, "mixed", .stringArray) == nil)
        #expect(Self.value(file, "none", .string) == nil)
        #expect(Self.value(file, "server", .string) == nil)
        #expect(Self.value(file, "missing", .string) == nil)
    }

    @Test func aFileThatIsNotAJSONObjectIsRefused() {
        #expect(throws: SettingsFileError.self) { try Self.snapshot("[1, 2]") }
        #expect(throws: SettingsFileError.self) { try Self.snapshot("{\"a\": }") }
    }
}
