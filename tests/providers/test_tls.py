"""The providers' HTTP clients share one verified TLS context: still verified, still naming the
certificates ``SSL_CERT_FILE`` gives, made once instead of twice for each provider."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from vis_core.providers.server_limits import served_models
from vis_core.providers.tls import verified_context


class _Models(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"data": [{"id": "local-model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTPS server on 127.0.0.1 with a certificate of its own: its base URL and the
    certificate (which no system store holds)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/v1", cert
    finally:
        server.shutdown()
        server.server_close()


def test_one_context_until_the_certificates_named_change(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    shared = verified_context()
    assert verified_context() is shared
    assert shared.verify_mode == ssl.CERT_REQUIRED and shared.check_hostname
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    assert verified_context() is not shared
    monkeypatch.delenv("SSL_CERT_DIR")
    assert verified_context() is shared


async def test_a_server_is_verified_with_the_certificates_ssl_cert_file_names(
    https_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, cert = https_server
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    [refused] = await served_models([(url, "")])
    assert isinstance(refused, OSError) and "CERTIFICATE_VERIFY_FAILED" in str(refused)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    assert await served_models([(url, "")]) == [["local-model"]]
