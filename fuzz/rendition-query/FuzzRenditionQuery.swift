// libFuzzer entry for the rendition parameters (see target.conf); not part of the Swift package.
//
// The input: a query string (first line), an Accept field (second line), then four bytes giving
// a canvas's width and height (1…65536 each). The run traps when:
//   - parsing, negotiation or the size rule crashes, on any bytes;
//   - a request is accepted whose served frame is empty, above the output limit on a side, or
//     whose crop does not lie inside the scaled frame;
//   - `quality` survives on a PNG, an AVIF frame has none, or `format=auto` does not say it was
//     negotiated or chooses AVIF;
//   - a rendition that changes nothing is not the full-size frame, or two renditions with one key
//     differ (the key is the cache's and the ETag's name for the frame), or a key read back
//     (`FrameRendition(key:)`) is not its rendition;
//   - `rendition=NAME` (the cache route's) is accepted with a rendition parameter, or names a key
//     that is not written back exactly as given;
//   - the same query read as a preview's is accepted with a format other than webp, avif, mp4,
//     webm or auto given, or with `format` given twice; `format=auto` or no `format` is not left to `Accept`; or auto's
//     choice is a format `Accept` refuses, a video, or none while `Accept` takes WebP;
//   - `background` is accepted twice, with a format other than mp4, or read as another colour;
//   - the same query read as a storyboard's (`tile`, `tileHeight`, `columns`, `frames`, …) crashes,
//     or makes a layout with a sheet beyond WebP's 16383 px or a tile outside its sheet.

import AnimatedImage

let policy = try! RenditionPolicy(
    defaultFormat: "png", presets: ["thumb:width=160&format=webp&quality=75", "square:width=64&height=64&fit=cover"],
    allowArbitrary: true, maxOutputDimension: 4096)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let lines = bytes.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false)
    let query = String(decoding: lines[0], as: UTF8.self)
    let accept = lines.count > 1 ? String(decoding: lines[1], as: UTF8.self) : ""
    let tail = lines.count > 2 ? Array(lines[2]) : []
    let w = tail.count >= 2 ? Int(tail[0]) << 8 + Int(tail[1]) + 1 : 480
    let h = tail.count >= 4 ? Int(tail[2]) << 8 + Int(tail[3]) + 1 : 270
    let items = query.split(separator: "&", omittingEmptySubsequences: false).map { pair in
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        return (name: String(parts[0]), value: parts.count > 1 ? String(parts[1]) : "")
    }
    storyboard(items, canvasWidth: w, canvasHeight: h)
    preview(items, accept: Substring(accept), query: query)
    named(items, query: query)
    guard let requested = try? policy.requested(items, accept: Substring(accept)) else { return 0 }
    if requested.request.format == .png { check(requested.request.quality == nil, "quality on a PNG: \(query)") }
    if requested.request.format == .avif { check(requested.request.quality != nil, "an AVIF without quality: \(query)") }
    if items.contains(where: { $0.name == "format" && $0.value == "auto" }) {
        check(requested.negotiated, "auto not negotiated: \(query)")
        check(requested.request.format != .avif, "auto chose AVIF for a frame: \(query)")
    }
    guard let rendition = try? policy.rendition(requested, canvasWidth: w, canvasHeight: h) else { return 0 }
    let (ow, oh) = (rendition.outputWidth, rendition.outputHeight)
    check(ow >= 1 && oh >= 1 && ow <= 4096 && oh <= 4096, "\(query) on \(w)×\(h) serves \(ow)×\(oh)")
    check(rendition.scaledWidth >= 1 && rendition.scaledHeight >= 1, "empty scaled frame")
    if let crop = rendition.crop {
        check(
            crop.x >= 0 && crop.y >= 0 && crop.maxX <= rendition.scaledWidth && crop.maxY <= rendition.scaledHeight,
            "crop \(crop) outside \(rendition.scaledWidth)×\(rendition.scaledHeight)")
    }
    if !rendition.scales(width: w, height: h) && rendition.crop == nil && rendition.format == .png {
        check(rendition.isExact(width: w, height: h), "a rendition that changes nothing is not exact")
    }
    let again = FrameRendition(
        scaledWidth: rendition.scaledWidth, scaledHeight: rendition.scaledHeight, crop: rendition.crop,
        format: rendition.format, quality: rendition.quality)
    check(again.key == rendition.key && again == rendition, "the key does not name the rendition")
    check(FrameRendition(key: Substring(rendition.key)) == rendition, "the key \(rendition.key) is not read back")
    if let dpr = requested.request.dpr as DevicePixelRatio? {
        check(DevicePixelRatio(decimal: Substring(dpr.description)) == dpr, "dpr \(dpr) does not round-trip")
    }
    return 0
}

/// The query as the cache route's `rendition=NAME`.
func named(_ items: [(name: String, value: String)], query: String) {
    guard let name = try? RenditionName.named(in: items) else { return }
    check(!items.contains { RenditionQuery.isParameter($0.name) }, "rendition accepted with a rendition parameter: \(query)")
    let given = items.first { $0.name == "rendition" }?.value ?? ""
    switch name {
    case .full: check(given == "full", "\(given) read as full")
    case .key(let rendition): check(rendition.key == given, "\(given) read as \(rendition.key)")
    }
}

/// The query as a storyboard's, laid out over a short timeline of the canvas.
func storyboard(_ items: [(name: String, value: String)], canvasWidth w: Int, canvasHeight h: Int) {
    guard let spec = try? StoryboardQuery.spec(items),
        let layout = try? StoryboardLayout(
            spec, canvasWidth: w, canvasHeight: h, timeline: Timeline(rawDelaysMs: [100, 40, 0, 250], playCount: 0),
            maxSheetPixels: 1 << 24, maxTiles: 10_000, maxOutputDimension: 4096)
    else { return }
    for sheet in layout.sheets {
        check(sheet.width >= 1 && sheet.height >= 1, "an empty sheet")
        check(sheet.width <= StoryboardLayout.maxSheetSide && sheet.height <= StoryboardLayout.maxSheetSide, "sheet too large")
    }
    for tile in layout.tiles {
        let sheet = layout.sheets[tile.sheet]
        check(
            tile.x >= 0 && tile.y >= 0 && tile.x + tile.width <= sheet.width && tile.y + tile.height <= sheet.height,
            "tile \(tile) outside its \(sheet.width)×\(sheet.height) sheet")
    }
}

/// The query as a preview's, its format chosen by `accept` under `format=auto`.
func preview(_ items: [(name: String, value: String)], accept: Substring, query: String) {
    let formats = items.filter { $0.name == "format" }.map(\.value)
    if let requested = try? policy.preview(items) {
        check(formats.count <= 1, "format given twice accepted: \(query)")
        check(formats.allSatisfy { ["webp", "avif", "mp4", "webm", "auto"].contains($0) }, "preview format accepted: \(query)")
        check((requested.format == nil) == (formats.first ?? "auto" == "auto"), "auto not left to Accept: \(query)")
        check(requested.rendition.request.format == .webp, "a preview's frames not in WebP's rendition: \(query)")
        let backgrounds = items.filter { $0.name == "background" }.map(\.value)
        check(backgrounds.count <= 1, "background given twice accepted: \(query)")
        if let given = backgrounds.first {
            check(requested.format == .mp4, "background accepted for a format with alpha: \(query)")
            check(OpaqueBackground(hex: given) == requested.background, "background read as another colour: \(query)")
        } else {
            check(requested.background == .white, "a background without background=: \(query)")
        }
    }
    let chosen = AcceptNegotiation.previewFormat(accept)
    if let chosen { check(AcceptNegotiation.accepts(chosen, accept), "auto chose \(chosen), which Accept refuses: \(accept)") }
    check(chosen != .mp4 && chosen != .webm, "auto chose a video: \(accept)")
    _ = AcceptNegotiation.accepts(.mp4, accept)
    _ = AcceptNegotiation.accepts(.webm, accept)
    if chosen == nil { check(!AcceptNegotiation.accepts(.webp, accept), "auto chose nothing, Accept takes WebP: \(accept)") }
}
