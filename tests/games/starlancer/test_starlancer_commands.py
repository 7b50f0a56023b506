"""The 95-command catalogue: every argument count, and the disassembler popping exactly that many."""

from __future__ import annotations

import pytest

from audio.games.starlancer.formats.dte import write_routine
from audio.games.starlancer.script.commands import COMMANDS, CommandError, command, condition_code
from audio.games.starlancer.script.disasm import disassemble

# "idx name params" as the seed's Executor table lists them (typed independently of the module)
SEED = """00 PrintShipName 2 01 CreateTimer 4 02 DestroyTimer 1 03 CreateFlightGroup 1 04 DestroyFlightGroup 1
05 Wait 1 06 PlaySpeech 1 07 WaitForSpeech 0 08 PlayCommsMovie 3 09 WaitForMovie 0 0A PrintDebugMessage 1
0B SetAI 4 0C ClearAI 1 0D SetPatrolRoute 2 0E SetPilot 2 0F SetTriggerState 3 10 StartDirectorCam 5
11 StartShipAnimation 2 12 ShipFollowCurve 3 13 SetupLaunch 3 14 StartLaunch 1 15 DisplaySubTitle 1
16 ResetCodePriority 1 17 InterruptTriggerCode 0 18 CommsFromShip 3 19 CommsFromPilot 3
1A SetInvulnerability 2 1B MovingShipFollowCurve 4 1C DisableObject 2 1D PositionRelative 2
1E WhenPlayerLastJumped 0 1F StartMissileCam 1 20 StartChaseCam 1 21 SetPlayerTarget 2 22 SetTargetable 2
23 PlayMusic 2 24 StopDirectorCam 0 25 SetActionCentre 2 26 Dock 3 27 DisableTaunts 1 28 Fly 3
29 CommsFromShipOnce 3 2A CommsFromPilotOnce 3 2B DisableLights 2 2C SetEnvironmentFX 2 2D MultiPlayerSync 0
2E DisableGenericComms 1 2F DisableGuns 2 30 SetNavPoint 2 31 SetEscortPoint 2 32 ResetAfterBurners 0
33 DisableMissiles 2 34 DisableEngines 2 35 DisableEject 2 36 SetHostile 2 37 ResetToSpawnPositions 0
38 UpdateEnvironmentFXState 0 39 SetPrimaryTarget 1 3A WaitForJumpOrLaunch 1 3B DoNotDisturb 2
3C SetEnvironmentFXNebula 1 3D StartShipAnimationReverse 2 3E SnapToPoint 2 3F PlayFostersLastStand 0
40 OpenInstrument 1 41 CloseInstrument 1 42 DestroySubObject 2 43 SetObjective 2 44 SetRescueProbabilities 3
45 IsShipThisPlayer 1 46 SetFlybackMarker 2 47 ResetFlybackMarker 0 48 StopShipAnimation 2
49 SetShipAvoidance 2 4A MatchSpeed 2 4B MovingShipBackupCurve 4 4C WaitForKey 1 4D TerminateMission 0
4E TurretSetTarget 2 4F SetAnyTriggerState 4 50 WaitForDirectorCam 0 51 KillAllScriptExecutionExecptMe 0
52 StackDirectorCam 5 53 Scanner 1 54 ReplaceSubObject 2 55 Fire 2 56 MultiplayerScriptSync 1
57 FriendlyFire 0 58 Cloak 2 59 ReplenishWeapons 1 5A WillsBlag 1 5B ShowHudIcon 2 5C DisableListing 2
5D DisableObjectAtNextJump 2 5E DarrensNaughtyBlag 2"""
_T = SEED.split()
ROWS = [(int(_T[i], 16), _T[i + 1], int(_T[i + 2])) for i in range(0, len(_T), 3)]


def test_catalogue_has_95_commands_and_162_parameters():
    assert len(COMMANDS) == len(ROWS) == 95
    assert sum(c.argc for c in COMMANDS) == 162


@pytest.mark.parametrize("idx, name, argc", ROWS)
def test_argument_count(idx, name, argc):
    c = command(idx)
    assert (c.index, c.name, c.argc) == (idx, name, argc)


@pytest.mark.parametrize("idx, name, argc", ROWS)
def test_disassembler_pops_exactly_argc(idx, name, argc):
    code = bytes([0x32, 0xEE]) + b"".join(bytes([0x32, k]) for k in range(argc)) + bytes([0x21, idx])
    code += bytes([0x21, 0x05, 0x32, 0x01, 0x43])  # Wait(the sentinel); push_byte 1; return
    d = disassemble(write_routine(code))
    assert not d.errors
    call = d.calls[0]
    assert call.name == name and [str(a) for a in call.args] == [f"byte({k})" for k in range(argc)]
    assert [str(a) for a in d.calls[1].args] == ["byte(238)"]  # the sentinel was left below them


def test_flag_word_on_seven_commands():
    assert {c.name for c in COMMANDS if c.flagged} == {
        "Wait",
        "WaitForSpeech",
        "WaitForMovie",
        "ResetAfterBurners",
        "PlayFostersLastStand",
        "WaitForKey",
        "TerminateMission",
    }


def test_index_past_the_catalogue_is_an_error():
    with pytest.raises(CommandError):
        command(0x5F)


def test_trigger_condition_names():
    assert condition_code("TT_PLAYER_READY_TO_JUMP") == 8 and condition_code("Destroyed") == 1
    assert condition_code("TT_BEING_CHASED") == 0x20 and condition_code(5) == 5
