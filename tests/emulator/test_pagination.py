from __future__ import annotations

import pytest
import yaml

from reconciler.emulator import Emulator


def test_page_info_across_pages(client):
    first = client.get("/workspaces", params={"limit": "2"}).json()["data"]
    second = client.get("/workspaces", params={"limit": "2", "page": "2"}).json()["data"]
    assert [w["id"] for w in first["workspaces"]] == ["ws_home", "ws_kickoff"]
    assert first["pageInfo"] == {"page": 1, "pages": 2, "total": 3, "pageTotal": 2,
                                 "hasNextPage": True, "hasPrevPage": False}
    assert [w["id"] for w in second["workspaces"]] == ["ws_portal"]
    assert second["pageInfo"] == {"page": 2, "pages": 2, "total": 3, "pageTotal": 1,
                                  "hasNextPage": False, "hasPrevPage": True}


def test_default_page_is_one_with_limit_100(client):
    info = client.get("/workspaces").json()["data"]["pageInfo"]
    assert info == {"page": 1, "pages": 1, "total": 3, "pageTotal": 3, "hasNextPage": False, "hasPrevPage": False}


def test_page_past_the_end_is_empty(client):
    data = client.get("/workspaces", params={"page": "5"}).json()["data"]
    assert data["workspaces"] == [] and data["pageInfo"]["hasPrevPage"] is True


def test_bad_page_or_limit_is_400(client):
    for params in ({"page": "0"}, {"page": "x"}, {"limit": "-1"}, {"limit": "1.5"}, {"limit": "100000"}):
        response = client.get("/workspaces", params=params)
        assert response.status_code == 400, params
        assert next(iter(params)) in response.json()["error"]["message"]


# -- every list endpoint --------------------------------------------------------

LISTS = [("/workspaces", "workspaces"), ("/workspace-domains", "workspaceDomains"), ("/users", "users"),
         ("/accounts", "accounts"), ("/custom-fields", "customFields")]


@pytest.fixture
def emulator(seed_path, clock):
    """The two-company seed with at least two items on every list."""
    doc = yaml.safe_load(seed_path.read_text(encoding="utf-8"))
    acme = doc["companies"]["acme"]
    acme["customFields"] = [
        {"id": "cf_1", "name": "Region", "variableName": "region", "type": "richText", "objectType": "workspace"},
        {"id": "cf_2", "name": "Tier", "variableName": "tier", "type": "richText", "objectType": "account"},
        {"id": "cf_3", "name": "Won", "variableName": "won", "type": "singleCheckbox", "objectType": "deal"},
    ]
    acme["workspaces"][2]["domains"] = [{"domain": "partner.io", "role": "viewer"}]
    return Emulator.from_seed(doc, clock=clock)


@pytest.mark.parametrize(("path", "name"), LISTS, ids=[p for p, _ in LISTS])
def test_every_list_pages_through_all_items_once(client, path, name):
    everything = client.get(path).json()["data"]
    total = everything["pageInfo"]["total"]
    assert total >= 2 and everything["pageInfo"]["pageTotal"] == total
    seen, infos = [], []
    for number in range(1, total + 1):
        data = client.get(path, params={"page": str(number), "limit": "1"}).json()["data"]
        seen += [item["id"] for item in data[name]]
        infos.append(data["pageInfo"])
    assert seen == [item["id"] for item in everything[name]]
    assert infos[0] == {"page": 1, "pages": total, "total": total, "pageTotal": 1,
                        "hasNextPage": True, "hasPrevPage": False}
    assert infos[-1] == {"page": total, "pages": total, "total": total, "pageTotal": 1,
                         "hasNextPage": False, "hasPrevPage": True}


@pytest.mark.parametrize(("path", "name"), LISTS, ids=[p for p, _ in LISTS])
def test_every_list_defaults_to_page_one_of_100(client, path, name):
    info = client.get(path).json()["data"]["pageInfo"]
    assert info["page"] == 1 and info["pages"] == 1 and info["hasPrevPage"] is False


@pytest.mark.parametrize(("path", "name"), LISTS, ids=[p for p, _ in LISTS])
def test_every_list_refuses_a_bad_page_or_limit(client, path, name):
    assert client.get(path, params={"page": "0"}).status_code == 400
    assert client.get(path, params={"limit": "1001"}).status_code == 400


@pytest.mark.parametrize(("path", "name"), LISTS, ids=[p for p, _ in LISTS])
def test_every_list_answers_an_empty_page_past_the_end(client, path, name):
    data = client.get(path, params={"page": "99"}).json()["data"]
    assert data[name] == [] and data["pageInfo"]["pageTotal"] == 0 and data["pageInfo"]["hasNextPage"] is False


@pytest.mark.parametrize("value", ["\u00b2", "\u0661", "\uff11"])
def test_non_ascii_digits_in_page_or_limit_are_400(client, value):
    # str.isdigit() accepts these, int() does not (superscript two) or reads them as 1.
    assert client.get("/workspaces", params={"page": value}).status_code == 400
    assert client.get("/workspaces", params={"limit": value}).status_code == 400
