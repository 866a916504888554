import HTTPServer
import URLSigning

/// The player's half of signed URLs: a metadata request that was itself signed (its `sig`
/// verifies) gets `frameUrls` in its answer, one signed URL per frame carrying the same query
/// (rendition parameters and `exp`), so a frontend signs one URL — the `src` it hands
/// `<flipbook-player>` — and never holds a key. (Chosen over a signed URL template, which would
/// need a second signature scheme over a pattern; this one is the same check as every other.)
extension SourceRoutes {
    /// `json` (a metadata document) with `frameUrls` added when the request was validly signed.
    func withSignedFrameURLs(_ json: [UInt8], request: HTTPRequest, id: String, frameCount: Int) -> [UInt8] {
        guard let signing = services.signing, let query = URLSignature.queryWithoutSignature(request.target),
            signing.signature.verify(request.target, now: signing.now()) == nil, json.last == 0x7d
        else { return json }
        var out = json.dropLast() + Array(",\"frameUrls\":[".utf8)
        for index in 0..<frameCount {
            if index > 0 { out.append(0x2c) }
            let target = "/frames/\(id)/\(index)" + (query.isEmpty ? "" : "?" + query)
            out += Array(JSONString.quoted(signing.signature.sign(target)).utf8)
        }
        out += Array("]}".utf8)
        return Array(out)
    }
}
