import AnimatedImage
import FoundationEssentials
import Glibc
import SystemResources

/// Products shared through the bucket of `storage.backend = s3`, under `derived/{sha256}/`
/// (``S3Layout``): a preview is one object; a storyboard is one object per sheet and then the
/// list of its sheets (`files`, one `name size` line each), written last, so a replica that finds
/// the list finds every sheet. A replica that made a product puts it here; one that lacks it
/// locally looks here before building it.
struct S3SharedProducts: SharedProducts {
    let backend: S3Backend

    private var client: S3Client { backend.client }
    private var layout: S3Layout { backend.layout }

    /// The key of the list of a storyboard's sheets.
    private func listKey(_ sha256: String, _ name: String) -> String { layout.derived(sha256, name) + "/files" }

    func fetch(_ sha256: String, _ name: String, directory: Bool, into destination: String) throws(StorageFailure) -> Bool {
        guard directory else { return try download(layout.derived(sha256, name), to: destination, size: nil) }
        let listed = try client.send("GetObject", method: "GET", key: listKey(sha256, name))
        guard listed.status == 200 else {
            if listed.status == 404 { return false }
            throw S3Backend.refusal("GetObject", listKey(sha256, name), listed)
        }
        var files: [(name: String, size: Int)] = []
        for line in String(decoding: listed.body, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let size = Int(fields[1]), ProductName.isValid(String(fields[0])) else {
                throw .failed("the list \(listKey(sha256, name)) is malformed")
            }
            files.append((String(fields[0]), size))
        }
        do {
            try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
        } catch {
            throw .failed("cannot create \(destination): \(ErrorText.of(error))")
        }
        do throws(StorageFailure) {
            for file in files {
                let key = layout.derived(sha256, name) + "/" + file.name
                guard try download(key, to: destination + "/" + file.name, size: file.size) else {
                    try? FileManager.default.removeItem(atPath: destination)
                    return false  // removed meanwhile (its image deleted)
                }
            }
        } catch {
            try? FileManager.default.removeItem(atPath: destination)
            throw error
        }
        return true
    }

    /// Downloads `key` to `path`; false on 404. With `size`, a file of another size is refused.
    private func download(_ key: String, to path: String, size: Int?) throws(StorageFailure) -> Bool {
        let response = try client.download("GetObject", key: key, to: path)
        guard response.status == 200 else {
            if response.status == 404 { return false }
            throw S3Backend.refusal("GetObject", key, response)
        }
        if let size, FileStamp(path: path)?.size != size {
            unlink(path)
            throw .failed("\(key) is not the size its list says (\(size) bytes)")
        }
        return true
    }

    func put(_ sha256: String, _ name: String, from path: String) throws(StorageFailure) {
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .failed("no product at \(path)")
        }
        guard isDirectory else {
            try upload(file: path, key: layout.derived(sha256, name))
            return
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
        var list = ""
        for file in names {
            let size = try upload(file: path + "/" + file, key: layout.derived(sha256, name) + "/" + file)
            list += "\(file) \(size)\n"
        }
        let body = S3Client.Body.bytes(Array(list.utf8))
        try put(listKey(sha256, name), body: body, contentType: "text/plain")
    }

    /// PUTs the file at `path` as `key`; its size.
    @discardableResult
    private func upload(file path: String, key: String) throws(StorageFailure) -> Int {
        let bytes: ImageBytes
        do {
            bytes = try MappedFile(path: path).bytes
        } catch {
            throw .failed("\(error)")
        }
        try put(key, body: .mapped(bytes, offset: 0, length: bytes.count), contentType: "application/octet-stream")
        return bytes.count
    }

    private func put(_ key: String, body: S3Client.Body, contentType: String) throws(StorageFailure) {
        let response = try client.send(
            "PutObject", method: "PUT", key: key,
            headers: [("Content-MD5", S3Client.md5Base64(of: body)), ("Content-Type", contentType)], body: body)
        guard response.status == 200 else { throw S3Backend.refusal("PutObject", key, response) }
    }

    func removeAll(of sha256: String) throws(StorageFailure) {
        // The lists first: a storyboard without its list is no longer found, whatever follows.
        let keys = try backend.listKeys(prefix: layout.derivedProducts(sha256), startAfter: nil, count: 100_000)
        for key in keys.sorted(by: { $0.hasSuffix("/files") && !$1.hasSuffix("/files") }) {
            let response = try client.send("DeleteObject", method: "DELETE", key: key)
            guard response.status == 204 || response.status == 200 || response.status == 404 else {
                throw S3Backend.refusal("DeleteObject", key, response)
            }
        }
    }
}

extension S3Backend {
    /// Replicas that share the bucket share their products under `derived/`.
    var sharedProducts: (any SharedProducts)? { S3SharedProducts(backend: self) }
}
