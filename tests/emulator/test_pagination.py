from __future__ import annotations


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
