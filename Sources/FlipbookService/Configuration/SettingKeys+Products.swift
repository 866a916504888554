extension SettingKeys {
    /// `renditions.*` and `derived.*`: scaled and WebP frames, previews and storyboards.
    static let products: [Key] = [
        Key(
            name: "renditions.defaultFormat", kind: .string(\.renditions.defaultFormat),
            summary: """
                the format of frames whose request names none: `png` (frames without parameters are then exactly the \
                full-size PNGs), `webp`, or `auto` (WebP when `Accept` lists `image/webp` with q > 0, else PNG; \
                `Vary: Accept`)
                """),
        Key(
            name: "renditions.presets", kind: .strings(\.renditions.presets),
            summary: """
                named renditions, each `NAME:QUERY`, e.g. `thumb:width=160&format=webp&quality=75`, asked for with \
                `?r=thumb`; parameters given with `r` override the preset's
                """),
        Key(
            name: "renditions.allowArbitrary", kind: .bool(\.renditions.allowArbitrary),
            summary: "`false` = presets only, for public deployments: any rendition parameter other than `r` → 400"),
        Key(
            name: "renditions.decodeAheadPerImage", kind: .int(\.renditions.decodeAheadPerImage),
            summary: """
                how many renditions of one image get decode-ahead: the most recently used among those being played \
                (a client asked for three frames in order); the rest are made on demand
                """),
        Key(
            name: "derived.maxBytes", kind: .int(\.derived.maxBytes),
            summary: """
                the disk previews, storyboards and uploads' seek anchors may take under `<dataDir>/derived/`, least \
                recently used removed first
                """),
        Key(
            name: "derived.maxWaitSeconds", kind: .double(\.derived.maxWaitSeconds),
            summary: "how long a request waits for a product being built; then 503 + `Retry-After`, the build going on"),
        Key(
            name: "derived.maxOutputBytes", kind: .int(\.derived.maxOutputBytes),
            summary: """
                the largest preview, or storyboard's sheets together; larger → 422 naming this key (at most \
                `derived.maxBytes`)
                """),
        Key(
            name: "derived.maxSheetPixels", kind: .int(\.derived.maxSheetPixels),
            summary: "the most pixels of one storyboard sheet (never more than 16383 px a side either)"),
    ]
}
