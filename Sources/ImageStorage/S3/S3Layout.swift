/// The keys Flipbook writes under `storage.s3.prefix`, content-addressed:
/// - `originals/{sha256}` — an image's bytes, exactly as uploaded (immutable);
/// - `meta/{sha256}.json` — the ``StoredImage`` record of a content id; its presence is what
///   makes the image exist (written after the original, removed first);
/// - `names/{name}` — the record of a named image: its content id (`sha256`) and metadata;
/// - `refs/{sha256}/{name}` — an empty object for each name whose image is that original, so a
///   delete never removes bytes a name still serves;
/// - `derived/{sha256}/{product}` — a preview or storyboard made from that original (a
///   storyboard: `derived/{sha256}/{product}/{sheet}` and, written last, the list of its sheets
///   `derived/{sha256}/{product}/files`), shared by the replicas (``S3SharedProducts``).
package struct S3Layout: Sendable {
    let prefix: String

    init(prefix: String) {
        self.prefix = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
    }

    package static func isValidPrefix(_ prefix: String) -> Bool {
        !prefix.hasPrefix("/") && prefix.utf8.allSatisfy { ImageID.isNameByte($0) || $0 == 0x2f }
    }

    func original(_ sha256: String) -> String { prefix + "originals/" + sha256 }
    func meta(_ sha256: String) -> String { prefix + "meta/" + sha256 + ".json" }
    func name(_ name: String) -> String { prefix + "names/" + name }
    func refs(_ sha256: String) -> String { prefix + "refs/" + sha256 + "/" }
    func ref(_ sha256: String, _ name: String) -> String { refs(sha256) + name }
    func derivedProducts(_ sha256: String) -> String { prefix + "derived/" + sha256 + "/" }
    func derived(_ sha256: String, _ product: String) -> String { derivedProducts(sha256) + product }
    var metaPrefix: String { prefix + "meta/" }
    var namesPrefix: String { prefix + "names/" }

    /// The content id of a key under `meta/`, or nil for anything else.
    func contentID(ofMetaKey key: String) -> String? {
        guard key.hasPrefix(metaPrefix), key.hasSuffix(".json") else { return nil }
        let id = String(key.dropFirst(metaPrefix.count).dropLast(5))
        return ImageID.isContentID(id) ? id : nil
    }

    /// The image name of a key under `names/`, or nil for anything else.
    func imageName(ofNameKey key: String) -> String? {
        guard key.hasPrefix(namesPrefix) else { return nil }
        let name = String(key.dropFirst(namesPrefix.count))
        return ImageID.validateName(name) == nil ? name : nil
    }
}
