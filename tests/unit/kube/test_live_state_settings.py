"""The liveState options reach the live feed's settings; the defaults keep the promised bounds."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from limitguard.cli.configfile import load_config
from limitguard.core.config import ConfigError, LiveStateConfig
from limitguard.core.configread import config_from_mapping
from limitguard.kube.catchup import WATCH_WAIT_SECONDS
from limitguard.kube.reflector import ReflectorSettings
from limitguard.kube.unwritten import UnwrittenSettings


def test_live_state_options_are_read_with_their_defaults() -> None:
    assert config_from_mapping({}).live_state == LiveStateConfig(10.0, 60.0)
    chosen = config_from_mapping(
        {"liveState": {"bindingWriteHorizonSeconds": 15, "notReadyAfterSeconds": 120}}
    )
    assert chosen.live_state == LiveStateConfig(15.0, 120.0)


@pytest.mark.parametrize(
    "live_state",
    [{"bindingWriteHorizonSeconds": 0}, {"notReadyAfterSeconds": 5}, {"horizon": 10}],
)
def test_out_of_range_or_unknown_live_state_options_are_refused(live_state: dict, tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\n"
        + yaml.safe_dump({"liveState": live_state})
    )
    with pytest.raises(ConfigError, match="liveState"):
        load_config(path)


def test_the_defaults_keep_the_documented_bounds() -> None:
    reflector, unwritten = ReflectorSettings(), UnwrittenSettings()
    assert max(reflector.watch_timeout_seconds) + reflector.watch_stall_grace_seconds <= 30
    assert reflector.backoff_max_seconds <= 5
    assert reflector.unready_after_seconds == LiveStateConfig().not_ready_after_seconds
    assert unwritten.horizon_seconds == LiveStateConfig().binding_write_horizon_seconds
    # horizon + a round + (the watch passing the fence, or the grace and the next round's node read)
    assert unwritten.interval_seconds + unwritten.grace_seconds + unwritten.interval_seconds <= 5
    assert WATCH_WAIT_SECONDS <= 2
