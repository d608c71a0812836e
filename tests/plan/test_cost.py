from reconciler.plan.cost import least_seconds


def test_calls_within_one_window_need_no_waiting() -> None:
    assert least_seconds({"default": 120}, {"default": 120}) == 0


def test_each_further_window_of_calls_waits_a_minute() -> None:
    assert least_seconds({"default": 121}, {"default": 120}) == 60
    assert least_seconds({"default": 361}, {"default": 120}) == 180


def test_the_slowest_limit_class_decides() -> None:
    limits = {"default": 120, "workspace_creation": 30}
    assert least_seconds({"default": 100, "workspace_creation": 61}, limits) == 120
