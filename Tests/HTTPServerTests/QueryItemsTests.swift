import Testing

@testable import HTTPServer

/// Query strings split into decoded pairs, on bytes: empty pairs, missing `=`, `=` in values,
/// percent-encoded separators, `+` as space, and multi-byte characters kept whole.
@Suite("Query items")
struct QueryItemsTests {
    func items(_ query: String) -> [String] {
        HTTPRequest(method: .GET, target: "/x?" + query).queryItems.map { "\($0.name)=\($0.value)" }
    }

    @Test(arguments: [
        ("", []), ("&", []), ("&&", []), ("a", ["a="]), ("a=", ["a="]), ("=b", ["=b"]),
        ("a=1&&b=2&", ["a=1", "b=2"]), ("a=b=c", ["a=b=c"]), ("%26=%3D&x=%2", ["&==", "x=%2"]),
        ("q=a+b&+=1", ["q=a b", " =1"]), ("é=ü&ß", ["é=ü", "ß="]),
        ("width=320&format=webp&quality=80", ["width=320", "format=webp", "quality=80"]),
        ("w=%E2%82%AC", ["w=€"]),
    ])
    func split(_ query: String, _ expected: [String]) {
        #expect(items(query) == expected)
    }
}
