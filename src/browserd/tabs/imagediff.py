"""What changed between two screenshots: the changed pixels, their box, and that box cut out.

:func:`compare_images` decodes two images (PNG or JPEG) with Pillow, counts
the pixels where any channel (red, green, blue) differs by more than
``tolerance`` (0-255; antialiasing and JPEG noise stay under the default
:data:`DEFAULT_TOLERANCE`), finds the smallest box holding all of them and,
when there is one, cuts that box out of the *new* image and encodes it in
the new image's format (PNG, or JPEG at ``jpeg_quality``). Both images must
have the same pixel size (409 CONFLICT otherwise: :func:`size_mismatch`) and at most
:data:`MAX_DIFF_PIXELS` pixels each (BadRequest otherwise, checked from the
header before anything is decoded). :func:`css_region` turns the pixel box
into CSS pixels of the captured region.

The pixel work is CPU-bound (a 1280x720 pair: a few ms; a 25 MP full page:
about a second), so :func:`compare_in_thread` runs it in a worker thread
that is never abandoned (cancellation waits for the comparison; it is
bounded by the pixel limit). Pillow is imported there, on first use: the
service pays for it only when a diff is asked for. Plain code otherwise: no
tab, no CDP, no files.
"""

from __future__ import annotations

import io
import math
from typing import Any

import attrs
import trio

from ..errors import BadRequest, Conflict

__all__ = ["DEFAULT_TOLERANCE", "MAX_DIFF_PIXELS", "PixelDiff", "compare_images",
           "compare_in_thread", "css_region", "size_mismatch"]

#: A channel must differ by more than this (0-255) for its pixel to count as changed.
DEFAULT_TOLERANCE = 16
#: Pixels allowed in each image of a comparison (decoded RGB: 3 bytes each).
MAX_DIFF_PIXELS = 40_000_000
_FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG"}


def size_mismatch(old: tuple[int, int], new: tuple[int, int], **details: Any) -> Conflict:
    """The 409 of two images of different pixel sizes (they cannot be compared)."""
    return Conflict(
        f"the earlier screenshot is {old[0]}x{old[1]} px and this one {new[0]}x{new[1]} px; "
        "a pixel diff needs the same size",
        hint="the page, element or viewport changed size: diff against this new screenshot "
             "(its mediaId) next time",
        sinceWidth=old[0], sinceHeight=old[1], width=new[0], height=new[1], **details)


@attrs.frozen(kw_only=True)
class PixelDiff:
    """The outcome of a comparison.

    ``box`` is ``(left, top, right, bottom)`` in image pixels (right and
    bottom exclusive), None when nothing changed; ``crop`` the new image's
    pixels inside ``box``, encoded as ``mime`` (None when nothing changed).
    """

    width: int
    height: int
    changed_pixels: int
    box: tuple[int, int, int, int] | None
    crop: bytes | None = attrs.field(default=None, repr=lambda d: f"<{len(d or b'')} bytes>")
    crop_size: tuple[int, int] | None = None
    mime: str

    @property
    def changed(self) -> bool:
        return self.box is not None

    @property
    def ratio(self) -> float:
        """The changed share of all pixels (0 … 1, rounded to 6 places)."""
        return round(self.changed_pixels / max(1, self.width * self.height), 6)


def _open(data: bytes, mime: str, what: str) -> Any:
    """The image, its header read (not yet decoded); BadRequest when it is not one or too big."""
    from PIL import Image, UnidentifiedImageError  # first use: see the module docstring

    try:
        image = Image.open(io.BytesIO(data), formats=[_FORMATS[mime]])
    except (UnidentifiedImageError, OSError, KeyError):
        raise BadRequest(f"the {what} is not a readable {mime} image", field="since") from None
    width, height = image.size
    if width * height > MAX_DIFF_PIXELS:
        raise BadRequest(
            f"the {what} is {width}x{height} px, over the diff limit of "
            f"{MAX_DIFF_PIXELS // 1_000_000} MP",
            hint="diff the viewport or one element instead of a very long page")
    return image


def compare_images(old: bytes, old_mime: str, new: bytes, new_mime: str, *,
                   tolerance: int = DEFAULT_TOLERANCE, jpeg_quality: int = 80) -> PixelDiff:
    """Compare ``old`` and ``new`` (see the module docstring). Blocking: run it in a thread.

    Raises BadRequest (not an image, over :data:`MAX_DIFF_PIXELS`, tolerance
    outside 0-255) and 409 CONFLICT (:func:`size_mismatch`).
    """
    from PIL import ImageChops

    if not 0 <= tolerance <= 255:
        raise BadRequest("tolerance must be 0-255", field="tolerance")
    before = _open(old, old_mime, "earlier screenshot")
    after = _open(new, new_mime, "new screenshot")
    if before.size != after.size:
        raise size_mismatch(before.size, after.size)
    a, b = before.convert("RGB"), after.convert("RGB")
    # Per channel: 255 where it moved by more than the tolerance; a pixel counts when any did.
    over = [255 if v > tolerance else 0 for v in range(256)] * 3
    red, green, blue = ImageChops.difference(a, b).point(over).split()
    mask = ImageChops.lighter(ImageChops.lighter(red, green), blue)
    changed = mask.histogram()[255]
    box = mask.getbbox()
    width, height = b.size
    if box is None or changed == 0:
        return PixelDiff(width=width, height=height, changed_pixels=0, box=None, mime=new_mime)
    cut = b.crop(box)
    out = io.BytesIO()
    if new_mime == "image/jpeg":
        cut.save(out, format="JPEG", quality=jpeg_quality)
    else:
        cut.save(out, format="PNG")
    return PixelDiff(width=width, height=height, changed_pixels=changed,
                     box=(box[0], box[1], box[2], box[3]), crop=out.getvalue(),
                     crop_size=cut.size, mime=new_mime)


async def compare_in_thread(old: bytes, old_mime: str, new: bytes, new_mime: str, *,
                            tolerance: int = DEFAULT_TOLERANCE,
                            jpeg_quality: int = 80) -> PixelDiff:
    """:func:`compare_images` in a worker thread (never abandoned: cancellation waits)."""
    return await trio.to_thread.run_sync(
        lambda: compare_images(old, old_mime, new, new_mime, tolerance=tolerance,
                               jpeg_quality=jpeg_quality))


def css_region(box: tuple[int, int, int, int], *, image_size: tuple[int, int],
               css_size: tuple[float, float]) -> dict[str, int]:
    """``box`` (image pixels) as ``{x, y, width, height}`` in CSS pixels of the captured
    region (from its top-left), rounded outwards so it covers every changed pixel."""
    scale_x = image_size[0] / css_size[0] if css_size[0] > 0 else 1.0
    scale_y = image_size[1] / css_size[1] if css_size[1] > 0 else 1.0
    # Rounded to 1/1000 px first: a scale of 0.99999 must not widen the box by a pixel.
    left, top = math.floor(round(box[0] / scale_x, 3)), math.floor(round(box[1] / scale_y, 3))
    right = math.ceil(round(box[2] / scale_x, 3))
    bottom = math.ceil(round(box[3] / scale_y, 3))
    return {"x": left, "y": top, "width": right - left, "height": bottom - top}
