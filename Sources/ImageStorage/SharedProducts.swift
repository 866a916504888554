/// Where replicas that share no disk share their products (`storage.backend = s3`: the bucket,
/// ``S3SharedProducts``): the service's local store of products is the cache in front of it. A product is a
/// file (a preview) or a directory of files (a storyboard's sheets); it appears whole or not at
/// all, and is never rewritten (its name says what it holds).
///
/// Every method waits on the network: none is called on an event loop.
package protocol SharedProducts: Sendable {
    /// Brings product `name` of content `sha256` to `destination` (a file, or a directory made
    /// there when `directory`); false when it is not in the shared store (nothing is left at
    /// `destination` then).
    func fetch(_ sha256: String, _ name: String, directory: Bool, into destination: String) throws(StorageFailure) -> Bool

    /// Stores the product at `path` (a file, or a directory of files) as `name` of `sha256`.
    func put(_ sha256: String, _ name: String, from path: String) throws(StorageFailure)

    /// Removes every product of `sha256` (its image was deleted).
    func removeAll(of sha256: String) throws(StorageFailure)
}

/// The names of products and of their files (`preview-…webp`, `storyboard-…`, `0.webp`): what a
/// shared store's lists and a request's path may name.
package enum ProductName {
    /// Letters, digits, `.`, `_`, `-`, `+` — what product and file names are made of — at most 200
    /// bytes, and not a dot-only name.
    package static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 200 && name.contains { $0 != "." }
            && name.utf8.allSatisfy { ImageID.isNameByte($0) || $0 == UInt8(ascii: "+") }
    }
}

extension ImageStore {
    /// Where this store's products are shared with replicas that share no disk (the bucket of
    /// `storage.backend = s3`); nil for a data directory (replicas sharing it share its products).
    package var sharedProducts: (any SharedProducts)? { backend.sharedProducts }
}
