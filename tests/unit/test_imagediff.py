"""Screenshot diffs as plain code: images made here with Pillow, compared, their box cut out."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageDraw

from browserd.errors import BadRequest, Conflict
from browserd.tabs import imagediff
from browserd.tabs.imagediff import compare_images, css_region


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _page(box: tuple[int, int, int, int] | None = None, colour: str = "red",
          size: tuple[int, int] = (200, 100)) -> Image.Image:
    image = Image.new("RGB", size, "white")
    if box is not None:
        ImageDraw.Draw(image).rectangle((box[0], box[1], box[2] - 1, box[3] - 1), fill=colour)
    return image


def test_a_changed_box_is_found_counted_and_cut_out() -> None:
    before = _png(_page())
    after = _png(_page((30, 20, 70, 50)))
    diff = compare_images(before, "image/png", after, "image/png")
    assert diff.changed and diff.box == (30, 20, 70, 50)
    assert diff.changed_pixels == 40 * 30
    assert diff.ratio == round(1200 / 20000, 6)
    assert diff.crop is not None and diff.crop_size == (40, 30)
    crop = Image.open(io.BytesIO(diff.crop))
    assert (crop.format, crop.size) == ("PNG", (40, 30))
    assert crop.convert("RGB").getpixel((5, 5)) == (255, 0, 0)  # the new image's pixels


def test_nothing_changed_is_no_box_and_no_crop() -> None:
    same = _png(_page((30, 20, 70, 50)))
    diff = compare_images(same, "image/png", same, "image/png")
    assert (diff.changed, diff.box, diff.crop, diff.changed_pixels, diff.ratio) == (
        False, None, None, 0, 0.0)


def test_noise_under_the_tolerance_does_not_count() -> None:
    before = _page()
    noisy = _page((0, 0, 200, 100), colour="#f0f0f0")  # every channel 255 → 240: moved by 15
    noisy_png = _png(noisy)
    assert not compare_images(_png(before), "image/png", noisy_png, "image/png").changed
    tight = compare_images(_png(before), "image/png", noisy_png, "image/png", tolerance=10)
    assert tight.changed and tight.changed_pixels == 200 * 100
    # One channel over the tolerance is enough.
    blue_only = _page((10, 10, 12, 11), colour=(255, 255, 200))
    assert compare_images(_png(before), "image/png", _png(blue_only), "image/png").box == (
        10, 10, 12, 11)


def test_a_jpeg_is_compared_and_cut_out_as_jpeg() -> None:
    out_a, out_b = io.BytesIO(), io.BytesIO()
    _page().save(out_a, format="JPEG", quality=90)
    _page((100, 40, 160, 90), colour="blue").save(out_b, format="JPEG", quality=90)
    diff = compare_images(out_a.getvalue(), "image/jpeg", out_b.getvalue(), "image/jpeg")
    assert diff.box is not None
    left, top, right, bottom = diff.box
    # JPEG blocks smear the edge by a few pixels; the default tolerance keeps it close.
    assert abs(left - 100) <= 4 and abs(top - 40) <= 4
    assert abs(right - 160) <= 4 and abs(bottom - 90) <= 4
    assert diff.crop is not None and diff.crop[:2] == b"\xff\xd8"


def test_other_sizes_are_a_conflict() -> None:
    with pytest.raises(Conflict) as caught:
        compare_images(_png(_page()), "image/png", _png(_page(size=(200, 101))), "image/png")
    assert caught.value.details["sinceHeight"] == 100 and caught.value.details["height"] == 101


def test_not_an_image_and_too_many_pixels_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(BadRequest, match="not a readable"):
        compare_images(b"not a png", "image/png", _png(_page()), "image/png")
    monkeypatch.setattr(imagediff, "MAX_DIFF_PIXELS", 200 * 100 - 1)
    with pytest.raises(BadRequest, match="over the diff limit"):
        compare_images(_png(_page()), "image/png", _png(_page()), "image/png")
    with pytest.raises(BadRequest, match="tolerance"):
        compare_images(_png(_page()), "image/png", _png(_page()), "image/png", tolerance=256)


def test_the_box_in_css_pixels_covers_every_changed_pixel() -> None:
    assert css_region((30, 20, 70, 50), image_size=(200, 100), css_size=(200, 100)) == {
        "x": 30, "y": 20, "width": 40, "height": 30}
    # Device scale 2: an image pixel is half a CSS pixel; odd edges round outwards.
    assert css_region((61, 40, 141, 101), image_size=(400, 200), css_size=(200, 100)) == {
        "x": 30, "y": 20, "width": 41, "height": 31}
    # A scale a hair under 1 does not widen the box.
    assert css_region((30, 20, 70, 50), image_size=(1279, 720), css_size=(1279.0001, 720)) == {
        "x": 30, "y": 20, "width": 40, "height": 30}


async def test_the_comparison_runs_in_a_worker_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    main = threading.get_ident()
    seen: list[int] = []
    real = imagediff.compare_images

    def spy(*args: object, **kwargs: object) -> imagediff.PixelDiff:
        seen.append(threading.get_ident())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(imagediff, "compare_images", spy)
    same = _png(_page())
    diff = await imagediff.compare_in_thread(same, "image/png", same, "image/png")
    assert not diff.changed and seen and seen[0] != main
