import Glibc

/// Where `storage.backend = fs` keeps an image's files in the data directory: fanned out over
/// 4096 directories, so that no directory grows with the library (about 250 files each at a
/// million images):
///
/// - `images/<p>/<id>` — the image's bytes, exactly as uploaded;
/// - `records/<p>/<id>.json` — its ``StoredImage`` record.
///
/// `<p>` is three lowercase hex digits: a content id's first three (it is a SHA-256 already), or
/// for a named image the first three of the FNV-1a hash of its name (names are chosen by people,
/// and share prefixes). The layout before it — `objects/<id>` and `meta/<id>.json`, one flat
/// directory each — is still read on a miss and migrated (``FileSystemBackend/migrateLegacyLayout()``).
struct DataLayout: Sendable {
    let images: String
    let records: String
    let legacyObjects: String
    let legacyMeta: String

    init(dataDirectory: String) {
        images = dataDirectory + "/images"
        records = dataDirectory + "/records"
        legacyObjects = dataDirectory + "/objects"
        legacyMeta = dataDirectory + "/meta"
    }

    /// The fan-out directory name of `id`.
    static func shard(_ id: String) -> String {
        if ImageID.isContentID(id) { return String(id.utf8.prefix(3).map { Character(UnicodeScalar($0)) }) }
        var hash: UInt32 = 2_166_136_261  // FNV-1a
        for byte in id.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let digits = Array("0123456789abcdef".utf8)
        return String(
            decoding: [digits[Int(hash >> 8 & 0xF)], digits[Int(hash >> 4 & 0xF)], digits[Int(hash & 0xF)]], as: UTF8.self)
    }

    /// Whether `name` is a fan-out directory name.
    static func isShard(_ name: String) -> Bool {
        name.utf8.count == 3 && name.utf8.allSatisfy { $0 &- 0x30 < 10 || $0 &- 0x61 < 6 }
    }

    func imagePath(_ id: String) -> String { images + "/" + Self.shard(id) + "/" + id }
    func recordPath(_ id: String) -> String { records + "/" + Self.shard(id) + "/" + id + ".json" }
    func legacyObjectPath(_ id: String) -> String { legacyObjects + "/" + id }
    func legacyRecordPath(_ id: String) -> String { legacyMeta + "/" + id + ".json" }
}

extension DataLayout {
    /// Makes the fan-out directories of `id` when missing: durably, or with `durably` false
    /// for a caller that syncs the file system afterwards (``DurableFiles/syncFileSystem(of:)``).
    func makeShards(of id: String, durably: Bool = true) throws {
        let shard = Self.shard(id)
        for parent in [images, records] {
            let directory = parent + "/" + shard
            if mkdir(directory, 0o755) == 0 {
                if durably { try DurableFiles.syncDirectory(of: directory) }
            } else if errno != EEXIST {
                throw DurableFiles.failure("cannot create", directory)
            }
        }
    }

    /// Calls `each` with the id of every record, in both layouts (an id in both, twice).
    func enumerateStoredIDs(_ each: (String) -> Void) throws {
        for shard in try Self.names(in: records) where Self.isShard(shard) {
            for name in try Self.names(in: records + "/" + shard) { Self.recordID(name).map(each) }
        }
        if access(legacyMeta, F_OK) == 0 {
            for name in try Self.names(in: legacyMeta) { Self.recordID(name).map(each) }
        }
    }

    /// The id a record's file name stands for (`<id>.json`), or nil for anything else.
    static func recordID(_ name: String) -> String? {
        guard name.hasSuffix(".json"), !name.hasPrefix(".") else { return nil }
        let id = String(name.dropLast(5))
        return ImageID.isWellFormed(id) ? id : nil
    }

    /// The entries of `directory` but `.` and `..`.
    static func names(in directory: String) throws -> [String] {
        guard let stream = opendir(directory) else { throw DurableFiles.failure("cannot read", directory) }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
