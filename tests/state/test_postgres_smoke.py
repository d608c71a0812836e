from reconciler.state.backend import open_backend
from reconciler.state.model import State


def test_smoke(pg_state: str) -> None:
    b = open_backend(pg_state)
    s = b.load()
    assert s == State()
    w = b.write(s.with_resource("a", "ws_1"))
    assert b.load() == w
    with b.lock("x"):
        j = b.journal(w)
        j.append({"set": {"b": {"id": "ws_2"}}})
        assert b.load().resources["b"].id == "ws_2"
        j.fold(b.load())
    assert b.load().serial == 2
    b.close()
