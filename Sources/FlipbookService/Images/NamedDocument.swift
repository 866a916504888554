/// A JSON document with the image's display name (`"name"`, from the upload's
/// `Content-Disposition`) beside its fields, when it has one.
struct NamedDocument<Document: Encodable>: Encodable {
    var document: Document
    var name: String?

    init(_ document: Document, name: String?) {
        self.document = document
        self.name = name
    }

    private enum Key: String, CodingKey { case name }

    func encode(to encoder: any Encoder) throws {
        try document.encode(to: encoder)
        try Self.encodeName(name, to: encoder)
    }

    /// Adds `"name"` to the object `encoder` is writing, when there is a name.
    static func encodeName(_ name: String?, to encoder: any Encoder) throws {
        guard let name else { return }
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(name, forKey: .name)
    }
}
