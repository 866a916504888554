import Foundation
import Testing

@testable import FlipbookService

/// Upload ids: minted under a key, verified by anyone holding it until their start deadline;
/// tampered, expired or foreign ids are refused.
@Suite("Upload ids")
struct UploadIDTests {
    static let key = UploadIDs.key(setting: String(repeating: "5a", count: 32))
    static let now = 1_800_000_000_000

    @Test func aMintedIDVerifiesUnderTheSameKeyUntilItsDeadline() throws {
        let minter = UploadIDs(key: Self.key)
        let other = UploadIDs(key: Self.key)
        let id = minter.mint(expires: Self.now + 60_000)
        #expect(id.count == UploadIDs.length && UploadIDs.hasShape(id))
        #expect(other.verify(id, now: Self.now) == .success(Self.now + 60_000))
        #expect(other.verify(id, now: Self.now + 59_999) == .success(Self.now + 60_000))
        #expect(other.verify(id, now: Self.now + 60_000) == .failure(.expired))
        #expect(minter.mint(expires: Self.now + 60_000) != id, "the random part differs")
    }

    @Test func tamperedIDsAreRefused() throws {
        let ids = UploadIDs(key: Self.key)
        let id = Array(ids.mint(expires: Self.now + 60_000))
        // Any single character changed, in the random part, the deadline or the tag.
        for position in [0, 31, 33, 45, 47, 89] {
            var changed = id
            changed[position] = changed[position] == "1" ? "2" : "1"
            #expect(ids.verify(String(changed), now: Self.now) == .failure(.invalid), "position \(position)")
        }
        // A later deadline with the old tag; cut, extended, image-like ids.
        let later = String(id[..<34]) + "9" + String(id[35...])
        #expect(ids.verify(later, now: Self.now) == .failure(.invalid))
        #expect(ids.verify(String(id.dropLast()), now: Self.now) == .failure(.invalid))
        #expect(ids.verify(String(id) + "A", now: Self.now) == .failure(.invalid))
        #expect(ids.verify(String(repeating: "0", count: 64), now: Self.now) == .failure(.invalid))
        #expect(!UploadIDs.hasShape(String(repeating: "a", count: 64)))
    }

    @Test func anotherKeyRefusesTheID() throws {
        let id = UploadIDs(key: Self.key).mint(expires: Self.now + 60_000)
        let foreign = UploadIDs(key: UploadIDs.key(setting: String(repeating: "a5", count: 32)))
        #expect(foreign.verify(id, now: Self.now) == .failure(.invalid))
        // Without a key each process has a random one of its own.
        let first = UploadIDs(key: nil)
        let second = UploadIDs(key: nil)
        let own = first.mint(expires: Self.now + 60_000)
        #expect(first.verify(own, now: Self.now) == .success(Self.now + 60_000))
        #expect(second.verify(own, now: Self.now) == .failure(.invalid))
    }

    @Test func theKeySettingIsHex() {
        #expect(UploadIDs.key(setting: "") == nil)
        #expect(UploadIDs.key(setting: "0aFF") == [0x0a, 0xff])
        #expect(UploadIDs.key(setting: "xyz") == nil)
    }
}
