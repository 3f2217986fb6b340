"""The person's images: ``@shot.png`` and pasted images go with the request (every request
after it, also once the session is reopened), checked by their bytes, capped in size, read
only inside the workspace, and refused before any request for a model without image input."""

from __future__ import annotations

import base64
import io
import os
import struct
from pathlib import Path

import pytest
import yaml
from image_files import jpeg, png

from vis_core.events import ImageAttached, TurnStarted
from vis_core.host import Host, HostOptions
from vis_core.model.conversation import ImagePart
from vis_core.model.images import (
    MAX_IMAGE_BYTES,
    ImageRefused,
    ImagesNotAccepted,
    ImageTooLarge,
    NotAnImage,
    PersonImage,
    checked_image,
    sniff,
)
from vis_core.model.turn import TurnStatus


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def script(path: Path, responses: list[dict]) -> Path:
    path.write_text(yaml.safe_dump(responses), encoding="utf-8")
    return path


def test_types_and_dimensions_come_from_the_bytes() -> None:
    assert sniff(png(3, 2)) == ("image/png", 3, 2)
    assert sniff(jpeg(640, 480)) == ("image/jpeg", 640, 480)
    assert sniff(b"GIF89a" + struct.pack("<HH", 7, 5) + b"\x00" * 8) == ("image/gif", 7, 5)
    vp8l = b"RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00\x2f"
    vp8l += ((10 - 1) | ((20 - 1) << 14)).to_bytes(4, "little")
    assert sniff(vp8l) == ("image/webp", 10, 20)
    assert sniff(b"hello") is None


def test_a_png_that_is_not_a_png_is_refused_by_name() -> None:
    with pytest.raises(NotAnImage, match=r"secrets\.png is not a PNG image"):
        checked_image("secrets.png", b"API_KEY=sk-123\n")
    with pytest.raises(NotAnImage, match=r"shot\.png is not a PNG image: its bytes are JPEG"):
        checked_image("shot.png", jpeg(4, 4))
    huge = b"\x89PNG\r\n\x1a\n" + png(1, 1)[8:16] + struct.pack(">II", 100_000, 100_000)
    with pytest.raises(
        ImageTooLarge, match=r"big\.png is 3\.9 MB; an image may be at most 3\.9 MB and its size"
    ):
        checked_image("big.png", huge + b"\x00" * MAX_IMAGE_BYTES)
    assert checked_image("ok.jpg", jpeg(4, 3)) == PersonImage(
        "ok.jpg", "image/jpeg", jpeg(4, 3), 4, 3
    )


def test_an_image_above_the_cap_is_downscaled_under_it() -> None:
    from PIL import Image

    noise = Image.frombytes("RGB", (1500, 1300), os.urandom(1500 * 1300 * 3))
    out = io.BytesIO()
    noise.save(out, format="PNG", compress_level=1)
    assert out.tell() > MAX_IMAGE_BYTES
    image = checked_image("noise.png", out.getvalue())
    assert image.media_type == "image/jpeg" and image.size <= MAX_IMAGE_BYTES
    assert sniff(image.data) == ("image/jpeg", image.width, image.height)
    assert max(image.width, image.height) <= 1500 and image.width > image.height


def _gif_claiming_one_pixel(frame: tuple[int, int], size: int) -> bytes:
    """A GIF whose screen header says 1x1 while its first frame is ``frame`` (Pillow grows
    the image to the frame), padded with a comment to ``size`` bytes; its data is cut."""
    head = b"GIF89a" + struct.pack("<HHBBB", 1, 1, 0, 0, 0) + b"\x21\xfe"
    frame_part = b"," + struct.pack("<HHHHB", 0, 0, *frame, 0) + b"\x02\x02\x4c\x01\x00;"
    pad = size - len(head) - len(frame_part) - 1
    blocks = b"".join(b"\xff" + b"x" * 255 for _ in range(pad // 256))
    return head + blocks + b"\x00" + frame_part


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_an_image_whose_header_understates_its_pixels_is_refused_before_decoding() -> None:
    """The pixel cap holds for the size the decoder would build, not only the header's: a
    GIF that says 1x1 but holds a 12000x12000 frame is refused before any pixel is made."""
    frame = (12000, 12000)  # 144 M pixels: under Pillow's own refusal (179 M), over the cap
    data = _gif_claiming_one_pixel(frame, MAX_IMAGE_BYTES + 4096)
    assert sniff(data) == ("image/gif", 1, 1) and len(data) > MAX_IMAGE_BYTES
    with pytest.raises(ImageTooLarge, match=f"{frame[0]}×{frame[1]} pixels, too many"):
        checked_image("bomb.gif", data)


async def test_an_at_image_goes_with_every_request_and_after_a_resume(
    workspace: Path, tmp_path: Path
) -> None:
    shot = png(3, 2)
    (workspace / "shots").mkdir()
    (workspace / "shots" / "shot.png").write_bytes(shot)
    pasted = PersonImage("clip.jpg", "image/jpeg", jpeg(8, 6), 8, 6)
    path = script(
        tmp_path / "s.yaml",
        [{"code": "print(1)"}, {"text": "A grey square."}, {"text": "Still grey."}],
    )
    options = HostOptions(workspace=workspace, provider="scripted", script=path)
    host = await Host.open(options)
    try:
        session = await host.new_session()
        ended = await session.submit(
            "describe @shots/shot.png.", mentions=["shots/shot.png"], images=[pasted]
        )
        assert ended.status is TurnStatus.COMPLETED, ended.error
        requests = list(session.model.provider.requests)  # type: ignore[union-attr]
        session_id = session.id
    finally:
        await host.close()
    expected = (ImagePart("image/jpeg", b64(pasted.data)), ImagePart("image/png", b64(shot)))
    for request in requests:  # the block's result request carries the image too
        first = request.messages[0]
        assert first.role == "user" and first.images == expected
        assert "[Vis: the person attached the image shot.png · PNG · " in first.text
        assert "· 3×2]" in first.text
    assert len(requests) == 2

    host = await Host.open(options)
    try:
        stored = [s.event for s in host.store.events(session_id)]
        attached = [e for e in stored if isinstance(e, ImageAttached)]
        turn = next(e for e in stored if isinstance(e, TurnStarted))
        assert [(e.name, e.media_type, e.width, e.height, e.turn_id) for e in attached] == [
            ("clip.jpg", "image/jpeg", 8, 6, turn.turn_id),
            ("shot.png", "image/png", 3, 2, turn.turn_id),
        ]
        session = await host.open_session(session_id)
        ended = await session.submit("and now?")
        assert ended.status is TurnStatus.COMPLETED, ended.error
        request = session.model.provider.requests[0]  # type: ignore[union-attr]
    finally:
        await host.close()
    assert request.messages[0].images == expected  # resent from the store after the resume
    assert request.messages[-1].text == "and now?" and request.messages[-1].images == ()


async def test_at_images_stay_inside_the_workspace(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.png"
    outside.write_bytes(png(1, 1))
    os.symlink(outside, workspace / "link.png")
    (workspace / "fake.png").write_text("not an image", encoding="utf-8")
    path = script(tmp_path / "s.yaml", [{"text": "never"}])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=path))
    try:
        session = await host.new_session()
        refusals = {}
        for mention in ("link.png", "../outside.png", str(outside), "fake.png", "none.png"):
            with pytest.raises(ImageRefused) as refused:
                await session.submit(f"see @{mention}", mentions=[mention])
            refusals[mention] = str(refused.value)
        requests = session.model.provider.requests  # type: ignore[union-attr]
        events = list(host.store.events(session.id))
    finally:
        await host.close()
    assert "@link.png leads out of the workspace" in refusals["link.png"]
    assert "leads out of the workspace" in refusals["../outside.png"]
    assert "leads out of the workspace" in refusals[str(outside)]
    assert refusals["fake.png"] == "fake.png is not a PNG image: its bytes do not start like one"
    assert "@none.png: no such file in the workspace" in refusals["none.png"]
    assert requests == [] and not any(isinstance(s.event, TurnStarted) for s in events)


async def test_a_model_without_image_input_refuses_before_any_request(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text(
        '[models."scripted/script"]\nimages = false\n', encoding="utf-8"
    )
    (workspace / "shot.png").write_bytes(png(2, 2))
    path = script(tmp_path / "s.yaml", [{"text": "fine"}])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=path))
    try:
        session = await host.new_session()
        with pytest.raises(ImagesNotAccepted) as refused:
            await session.submit("see @shot.png", mentions=["shot.png"])
        requests = list(session.model.provider.requests)  # type: ignore[union-attr]
        ended = await session.submit("no image this time")
    finally:
        await host.close()
    assert str(refused.value).startswith("scripted/script takes no image input, so the image")
    assert 'images = true under [models."scripted/script"]' in str(refused.value)
    assert requests == []
    assert ended.status is TurnStatus.COMPLETED


async def test_a_model_switched_to_without_image_input_gets_a_note_instead(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (workspace / "shot.png").write_bytes(png(2, 2))
    path = script(tmp_path / "s.yaml", [{"text": "grey"}])
    options = HostOptions(workspace=workspace, provider="scripted", script=path)
    host = await Host.open(options)
    try:
        session = await host.new_session()
        await session.submit("see @shot.png", mentions=["shot.png"])
        session_id = session.id
    finally:
        await host.close()
    (vis_home / "config.toml").write_text(
        '[models."scripted/script"]\nimages = false\n', encoding="utf-8"
    )
    host = await Host.open(options)
    try:
        session = await host.open_session(session_id)
        ended = await session.submit("and now, in words?")
        (request,) = session.model.provider.requests  # type: ignore[union-attr]
    finally:
        await host.close()
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert request.messages[0].images == ()
    assert request.messages[0].text.endswith("left out: this model takes no images]")
