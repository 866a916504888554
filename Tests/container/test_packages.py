"""What the runtime image holds (issue 32, item 5): every package the Dockerfile adds to the base
is needed — a library the binary links, or one of those packages' dependencies — and every
library the binary links resolves in the image. The sizes of the image and of each layer are
printed (`make container-image` prints them too)."""
import os
import re
import subprocess

import pytest

import engine

pytestmark = pytest.mark.usefixtures("image")

RUNTIME_BASE = os.environ.get("RUNTIME_BASE", "localhost/flipbook-debian:bookworm-slim")
# Image libraries of formats the service does not accept (and libvips, which loads them): none may
# be installed, so no such loader is reachable from the image.
FOREIGN_LOADERS = re.compile(r"^(libvips|libheif|librsvg|libpoppler|libopenexr|libopenjp2|libjxl|libtiff|libjpeg"
                             r"|libcfitsio|libmatio|libgsf|libexif|liblcms|libmagick|libgdk-pixbuf|libspng|libcgif)")
# Such libraries that come in only as the dependency of a package the binary needs, and why no
# loader is reachable through them: libjpeg62-turbo is linked by libyuv0 (libavif's colour
# conversion) for its MJPEG helpers, which libavif never calls; Flipbook reads no JPEG.
DEPENDENCY_ONLY = {"libjpeg62-turbo": "libyuv0"}


def in_image(image, *command):
    return engine.out("run", "--rm", *engine.ULIMITS, "--network", "none", "--entrypoint", command[0], image,
                      *command[1:])


def installed(image):
    """package → its Depends and Pre-Depends (alternatives flattened), as dpkg knows them."""
    text = in_image(image, "dpkg-query", "-W", "-f", "${Package}\t${Depends}, ${Pre-Depends}\n")
    packages = {}
    for line in text.splitlines():
        name, _, depends = line.partition("\t")
        names = {re.split(r"[\s:(]", d.strip())[0] for d in re.split(r"[,|]", depends) if d.strip()}
        packages[name] = names
    return packages


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    path = tmp_path_factory.mktemp("bin") / "flipbook"
    container = engine.name("copy")
    engine.podman("create", "--name", container, "--label", engine.RUN_LABEL, engine.IMAGE)
    try:
        engine.podman("cp", f"{container}:/usr/local/bin/flipbook", str(path))
    finally:
        engine.podman("rm", "-f", "-v", container, check=False)
    return str(path)


def test_every_added_package_is_needed(binary):
    dynamic = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    assert not [n for n in needed if "swift" in n.lower() or "foundation" in n.lower()], \
        f"the Swift runtime is linked dynamically: {needed}"
    ldd = in_image(engine.IMAGE, "ldd", "/usr/local/bin/flipbook")
    assert "not found" not in ldd, ldd

    owners = in_image(engine.IMAGE, "sh", "-c", " ".join(
        f"dpkg -S '*/{soname}' | head -1;" for soname in needed if not soname.startswith("ld-linux")))
    direct = {line.split(":")[0] for line in owners.splitlines() if line.strip()}
    image, base = installed(engine.IMAGE), installed(RUNTIME_BASE)
    added = set(image) - set(base)
    reachable, frontier = set(), [p for p in direct if p in image]
    while frontier:
        package = frontier.pop()
        if package in reachable:
            continue
        reachable.add(package)
        frontier += [d for d in image.get(package, ()) if d in image]
    unneeded = sorted(added - reachable)
    print(f"image packages: {len(image)} ({len(base)} in the base); the binary links {sorted(direct)}; "
          f"added: {len(added)}")
    assert not unneeded, f"installed but needed by nothing the binary loads: {unneeded}"
    foreign = sorted(p for p in image if FOREIGN_LOADERS.match(p.lower())
                     and not (p in DEPENDENCY_ONLY and p in image.get(DEPENDENCY_ONLY[p], ())))
    assert not foreign, f"loaders of formats the service does not accept are installed: {foreign}"
    assert direct <= set(image), f"libraries of the binary from packages not installed: {sorted(direct - set(image))}"


def test_the_binary_carries_no_icu_data(binary):
    """The service imports FoundationEssentials, never Foundation, whose internationalisation links
    ICU's data (`icudt76l`, 34 MB) into the static binary."""
    with open(binary, "rb") as f:
        data = f.read()
    assert b"icudt" not in data, "ICU's data is linked in: a module imports Foundation (docs/architecture.md)"
    print(f"\n/usr/local/bin/flipbook: {len(data)} bytes ({len(data) / 1e6:.1f} MB)")


def test_image_and_layer_sizes():
    size = int(engine.out("image", "inspect", "--format", "{{.Size}}", engine.IMAGE))
    base = int(engine.out("image", "inspect", "--format", "{{.Size}}", RUNTIME_BASE))
    layers = engine.out("history", "--format", "{{.Size}}\t{{.CreatedBy}}", engine.IMAGE).splitlines()
    print(f"\n{engine.IMAGE}: {size} bytes ({size / 1e6:.1f} MB); base {RUNTIME_BASE}: {base / 1e6:.1f} MB")
    for line in layers:
        layer_size, _, created_by = line.partition("\t")
        print(f"  {layer_size:>10}  {created_by[:110]}")
    assert size > base
