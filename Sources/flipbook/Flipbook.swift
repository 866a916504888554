import ArgumentParser

/// The `flipbook` command: inspect, extract and (soon) serve animated-image frames.
@main
struct Flipbook: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flipbook",
        abstract: "Decode animated images (GIF, APNG, WebP) into browser-exact frames.")
}
