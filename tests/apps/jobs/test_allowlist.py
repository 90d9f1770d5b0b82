import pytest

from apps.jobs.allowlist import EndpointRefused, endpoint_check

DEFAULT = ["127.0.0.0/8", "::1/128", "localhost"]


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8000", "http://127.9.9.9/v1", "http://[::1]:30000", "https://localhost"],
)
def test_it_allows_loopback_by_default(url):
    assert endpoint_check(url, DEFAULT) == url.rstrip("/")


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.5:8000",
        "http://169.254.169.254/latest/meta-data",
        "http://gpu-01.internal:8000",
        "http://[::ffff:10.0.0.5]/",
        "http://2130706433/",
    ],
)
def test_it_refuses_hosts_outside_the_allowlist(url):
    with pytest.raises(EndpointRefused, match="outside ENDPOINT_ALLOWLIST"):
        endpoint_check(url, DEFAULT)


def test_networks_and_wildcard_names_extend_it():
    allow = ["10.20.0.0/16", "*.gpu.example.com", "mi355x-01.lab"]
    assert endpoint_check("http://10.20.3.4:8000", allow)
    assert endpoint_check("http://node7.gpu.example.com:8000", allow)
    assert endpoint_check("http://MI355X-01.lab.:8000", allow)
    for url in ("http://10.21.0.1", "http://gpu.example.com", "http://evilgpu.example.com"):
        with pytest.raises(EndpointRefused):
            endpoint_check(url, allow)


def test_names_are_never_resolved_into_networks():
    # 'localhost' resolves to 127.0.0.1, but only names listed by name pass.
    with pytest.raises(EndpointRefused):
        endpoint_check("http://localhost:8000", ["127.0.0.0/8"])


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://127.0.0.1/", "http:// or https://"),
        ("http://user:pw@127.0.0.1/", "must not carry credentials"),
        ("http://127.0.0.1:99999/", "invalid port"),
        ("http:///v1", "no host"),
    ],
)
def test_it_refuses_malformed_urls_with_the_reason(url, message):
    with pytest.raises(EndpointRefused, match=message):
        endpoint_check(url, DEFAULT)


def test_the_settings_allowlist_is_the_default(settings):
    settings.ENDPOINT_ALLOWLIST = ["192.168.7.0/24"]
    assert endpoint_check("http://192.168.7.20:8000")
    with pytest.raises(EndpointRefused):
        endpoint_check("http://127.0.0.1:8000")
