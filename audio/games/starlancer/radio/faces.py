"""The 194 pilot faces (spec 11.11.1, from ``OpenReliant src/engine/game/pilots/faces.zig``).

A face: the name's GText string id (the text lives in the game's language file, not here), side
(``F`` friendly, ``H`` hostile), the films by head movement (0 talking, 1 laughing, 2 squadron: the
45th's ``45Tigers_Plt`` for every face, 3 dying), the hostile voice prefix (``rus`` or none; the
table's values 4 for pilot 21 and 0 for 185..191 are none) and the friendly voice prefix, and
whether the pilot has the fuller set of wingman replies. Head > 3 or a pilot >= 194 is the dead
channel: ``pilots\\static.fm8`` and no name (OpenReliant fix: the game reads past the table).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DEAD_CHANNEL_FILM",
    "FACES",
    "FLIGHT_INSTRUCTOR",
    "RELIANT_OFFICER",
    "SQUADRON_FILM",
    "YAMATO_OFFICER",
    "Face",
    "face_film",
    "moose",
]

DEAD_CHANNEL_FILM = "pilots\\static.fm8"
SQUADRON_FILM = "45Tigers_Plt"
FLIGHT_INSTRUCTOR = 82
RELIANT_OFFICER = 60
YAMATO_OFFICER = 84
_SWAP = {  # 45th films that swap by mission number (through 13 the Tigers' play as the Volunteers')
    "45tigers_plt": "45Volntrs_Plt",
    "45tigers_plt_l": "45Volntrs_Plt_L",
    "45tigers_plt_d": "45Volntrs_Plt_d",
    "45tigers_moose": "45Volntrs_Moose",
    "45tigers_moose_l": "45Volntrs_Moose_L",
    "45tigers_moose_d": "45Volntrs_Moose_d",
}


@dataclass(frozen=True)
class Face:
    """One pilot face (see the module docstring)."""

    number: int
    name_id: int
    side: str
    films: tuple[str, str, str, str]
    hostile_voice: str | None
    friendly_voice: str | None
    full_replies: bool

    @property
    def name(self) -> str:
        """The speaker name shown: the GText id (the text itself is game data)."""
        return f"text#{self.name_id}"


_ROWS = """
0 33 F 45TigersWL_Bandit 45TigersWL_Bandit_L 45TigersWL_Bandit_d rus ban *
1 37 F 45TigersWL_Diceman 45TigersWL_Diceman_L 45TigersWL_Diceman_D rus dic *
2 131 F 45Tigers_Moose 45Tigers_Moose_L 45Tigers_Moose_D rus -
3 101 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus fre
4 131 F 45Volntrs_Moose 45Volntrs_Moose_L 45Volntrs_Moose_d rus -
5 99 F 45Volntrs_Plt 45Volntrs_Plt_L 45Volntrs_Plt_d rus fre
6 33 F 45VolntrWL_Bandit 45VolntrWL_Bandit_L 45VolntrWL_Bandit_d rus ban *
7 29 F 45VolntrWL_Viper 45VolntrWL_Viper_L 45VolntrWL_Viper_D rus vip *
8 115 F 51st_Plt 45Tigers_Plt_L 51st_Plt_d rus -
9 87 F BGUARDP 45Tigers_Plt_L BGUARDD rus -
10 75 F BlacksunWL_Plt 45Tigers_Plt_L BlacksunWL_Plt_D rus -
11 75 F Blacksun_Plt 45Tigers_Plt_L Blacksun_Plt_D rus -
12 117 F Blades_Plt Blades_Plt_L Blades_Plt_d rus -
13 84 F BlckEgleWL_Plt 45Tigers_Plt_L BlckEgleWL_Plt_D rus -
14 83 F BlckEgle_Plt 45Tigers_Plt_L BlckEgle_Plt_D rus -
15 91 F BlckGrdIP_Plt 45Tigers_Plt_L BlckGrdIP_Plt_D rus -
16 92 F BlckGrdNP_Plt 45Tigers_Plt_L BlckGrdNP_Plt_D rus -
17 127 F BLKACE 45Tigers_Plt_L BlkAces_Plt_d rus -
18 68 F Bremen_Brdge_Off 45Tigers_Plt_L Bremen_Brdge_Off_D rus -
19 113 F BUCC 45Tigers_Plt_L BUCCDETH rus -
20 666 F Cat_Foster 45Tigers_Plt_L 45Tigers_Plt_D rus -
21 667 H COB 45Tigers_Plt_L Cobra_Plt_D - -
22 111 F Couger_Plt Couger_Plt_L CCouger_Plt_D rus -
23 71 F C_comms_off1 45Tigers_Plt_L C_comms_off1_death rus -
24 668 F C_Fhtr_01 45Tigers_Plt_L C_Fhtr_01_D rus -
25 669 F C_Scientist 45Tigers_Plt_L C_Scientist_D rus -
26 68 F Endevr_Brdge_Off 45Tigers_Plt_L 45Tigers_Plt_D rus -
27 136 F Enq_RelBridge 45Tigers_Plt_L Enq_RelBridge_D rus -
28 136 F Enq_YamBridge 45Tigers_Plt_L 45Tigers_Plt_D rus -
29 136 F Enriquez_Cockpit Enriquez_Cockpit_L Enriquez_Cockpit_D rus enq *
30 47 F FOSTDED 45Tigers_Plt_L 45Tigers_Plt_D rus -
31 71 F FrtBear_Comms 45Tigers_Plt_L FrtBear_Comms_D rus -
32 71 F FrtBxtr_Comms 45Tigers_Plt_L FrtBxtr_Comms_D rus -
33 71 F frtcrtr_comms 45Tigers_Plt_L frtcrtr_comms_death rus -
34 71 F frtshrmn_comms 45Tigers_Plt_L 45Tigers_Plt_D rus -
35 47 F GAMMADEA 45Tigers_Plt_L 45Tigers_Plt_D rus -
36 301 F Gamma_Ldr Gamma_Ldr_L GAMMADEA rus -
37 76 F GoldWarr_Plt 45Tigers_Plt_L GoldWarr_Plt_D rus -
38 110 F HellcatWL 45Tigers_Plt_L HellcatWL_d rus -
39 109 F Hellcat_Plt 45Tigers_Plt_L Hellcat_Plt_d rus -
40 129 F Hornet_Plt 45Tigers_Plt_L Hornet_Plt_D rus -
41 106 F JAckelWL_Plt JackelWL_Plt_L JackelWL_Plt_d rus -
42 105 F Jackel_Plt 45Tigers_Plt_L Jackel_Plt_D rus -
43 121 F Jaguar_Plt 45Tigers_Plt_L Jaguar_Plt_D rus -
44 71 F KestrlCmmnd_Comms 45Tigers_Plt_L KestrlCmmnd_Comms_D rus -
45 68 F Koenig_Brdge_off 45Tigers_Plt_L 45Tigers_Plt_D rus -
46 68 F Kstrl_Brge_Off 45Tigers_Plt_L 45Tigers_Plt_D rus -
47 670 F kurgen_pil 45Tigers_Plt_L C_Kurgen_Plt_D rus -
48 165 F Lonestar_Plt Lonestar_Plt_L Lonestar_Plt_D rus -
49 119 F Mauler_Plt 45Tigers_Plt_L Mauler_Plt_D rus -
50 140 F MCGANNNO MCGALOOK MCGDEATH rus -
51 68 F Mitchel_Brdge_Off 45Tigers_Plt_L Mtchel_Brdge_Off_D rus -
52 164 F Nanny_Ldr Nanny_Ldr_L Nanny_Ldr_D rus -
53 104 F PirateWL_Plt PirateWL_Plt_L PirateWL_Plt_D rus -
54 103 F Pirate_Plt 45Tigers_Plt_L Pirate_Plt_D rus -
55 98 F Prowler_Plt 45Tigers_Plt_L Prowler_Plt_D rus -
56 672 F Pukov_Cap 45Tigers_Plt_L Pukov_Cap_D rus -
57 673 F PumaWL_Plt PumaWL_Plt_L PumaWL_Plt_D rus -
58 114 F Puma_Plt 45Tigers_Plt_L Puma_Plt_D rus -
59 85 F Raven_Plt 45Tigers_Plt_L Raven_Plt_D rus -
60 68 F Rel_Brdge_Off 45Tigers_Plt_L Rel_Brdge_Off_D rus -
61 674 F Ripper_Plt 45Tigers_Plt_L Ripper_Plt_D rus -
62 30 F RoninWL_Plt RoninWL_Plt_L RoninWL_Plt_D rus -
63 108 F Ronin_Plt 45Tigers_Plt_L Ronin_Plt_D rus -
64 675 F RUSSBOMB 45Tigers_Plt_L C_TorpWL_Plt_D rus -
65 82 F SabreWL_plt_ 45Tigers_Plt_L SabreWL_Plt_D rus -
66 81 F Sabre_Plt 45Tigers_Plt_L Sabre_Plt_D rus -
67 78 F Saracen_Plt 45Tigers_Plt_L Saracen_Plt_D rus -
68 80 F ScorpionWL_Plt 45Tigers_Plt_L ScorpionWL_Plt_D rus -
69 79 F Scorpion_Plt 45Tigers_Plt_L Scorpion_Plt_D rus -
70 89 F sladin_cap_normal 45Tigers_Plt_L Saladin_Cap_D rus -
71 133 F Stahl_BrdShip 45Tigers_Plt_L 45Tigers_Plt_D rus -
72 132 F Stahl_Marines 45Tigers_Plt_L 45Tigers_Plt_D rus -
73 135 F Stiener_Ejected 45Tigers_Plt_L Stiener_Ejected_D rus -
74 125 F Stinger_Plt 45Tigers_Plt_L Stinger_Plt_D rus -
75 676 F Stork_Plt 45Tigers_Plt_L Stork_Plt_D rus -
76 236 F Ullys_Capt 45Tigers_Plt_L Ullys_Capt_Panic rus -
77 236 F ullys_capt_panic 45Tigers_Plt_L ullys_capt_panic rus -
78 135 F VampireWL_Stiener VampireWL_Stiener_L VampireWL_Stiener_D rus -
79 107 F Vampire_Plt 45Tigers_Plt_L Vampire_Plt_D rus -
80 88 F Varygag_Capt 45Tigers_Plt_L Varygag_Capt_D rus -
81 68 F Victorious_Brdge_Off 45Tigers_Plt_L Victorious_Brdge_Off_D rus -
82 256 F VirtFlt_Ins 45Tigers_Plt_L 45Tigers_Plt_D rus -
83 68 F Washngtn_Brdge_Off 45Tigers_Plt_L 45Tigers_Plt_D rus -
84 68 F Yam_Brdge_Off 45Tigers_Plt_L Yam_Brdge_Off_D rus -
85 32 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus fre
86 34 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus sil
87 35 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus tak
88 36 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus jor
89 38 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus vix
90 39 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus cut
91 40 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus cla
92 41 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus ski
93 42 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus jui
94 43 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus fac
95 44 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus haw *
96 45 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus arr
97 46 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus ner
98 47 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus rhi
99 48 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus sta
100 49 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus fla
101 50 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus -
102 51 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus sil
103 52 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus jor
104 53 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus cut
105 54 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus rhi
106 55 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus -
107 56 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus ner
108 57 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus wor
109 58 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus sil
110 59 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus vix
111 60 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus ner
112 61 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus sta
113 62 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus fre
114 63 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus rhi
115 64 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus jui
116 65 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus ego
117 66 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus fla
118 67 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus sta
119 677 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus ego
120 37 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus dic *
121 681 F Capt_Mukai 45Tigers_Plt_L Capt_Mukai_D rus -
122 666 F Cat_foster_prwlr 45Tigers_Plt_L 45Tigers_Plt_D rus -
123 682 F C_TorpWL_Plt 45Tigers_Plt_L C_TorpWL_Plt_D rus -
124 1262 F Gen_Reese_Pod 45Tigers_Plt_L Gen_Reese_Pod_D rus -
125 90 F Kulov_Borodin 45Tigers_Plt_L Kulov_Borodin_D rus -
126 683 F Kulov_Pod 45Tigers_Plt_L Kulov_Pod_D rus -
127 684 F Mammoth_Plt_01 45Tigers_Plt_L Mammoth_Plt_01_D rus -
128 684 F Mammoth_Plt_02 45Tigers_Plt_L Mammoth_Plt_02_D rus -
129 684 F Mammoth_Plt_03 45Tigers_Plt_L Mammoth_Plt_03_d rus -
130 684 F Mammoth_Plt_04 45Tigers_Plt_L Mammoth_Plt_04_D rus -
131 685 F SaracenWL_Plt 45Tigers_Plt_L SaracenWL_Plt_D rus -
132 686 F Stahl_RippShip Stahl_RippShip_L Stahl_RippShip_D rus -
133 77 F goldwarrwl_plt 45Tigers_Plt goldwarrwl_plt_d rus -
134 976 F hornetwl_plt hornetwl_plt_l hornetwl_plt_d rus -
135 684 F mammoth_plt_05 45Tigers_Plt mammoth_plt_05_d rus -
136 684 F mammoth_plt_06 45Tigers_Plt mammoth_plt_06_d rus -
137 684 F mammoth_plt_07 45Tigers_Plt mammoth_plt_07_d rus -
138 1277 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus jor
139 1278 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus tak
140 1279 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus fla
141 1280 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus arr
142 1281 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus vix
143 1282 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus fac
144 1283 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus jor
145 1284 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus fre
146 1285 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus cut
147 1287 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus jui
148 1288 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus ego
149 1289 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus cla
150 1290 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus cla
151 1291 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus ner
152 1292 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus cla
153 1293 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus fac
154 1294 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus wor
155 1295 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus ego
156 1296 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus jui
157 1297 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus ski
158 1298 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus fac
159 1299 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus jor
160 1300 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus cut
161 1301 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus wor
162 1302 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus fac
163 1303 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus jor
164 1304 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus ner
165 1305 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus jui
166 1306 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus jor
167 1307 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus ego
168 1308 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus ski
169 1309 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus vix
170 1310 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus wor
171 1311 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus -
172 33 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus ban
173 1121 F mammoth_plt_01 45Tigers_Plt_L mammoth_plt_01_D rus -
174 1122 F mammoth_plt_03 45Tigers_Plt_L mammoth_plt_03_D rus -
175 1123 F mammoth_plt_02 45Tigers_Plt_L mammoth_plt_02_D rus -
176 1124 F mammoth_plt_05 45Tigers_Plt_L mammoth_plt_05_D rus -
177 1125 F mammoth_plt_07 45Tigers_Plt_L mammoth_plt_07_D rus -
178 1126 F mammoth_plt_06 45Tigers_Plt_L mammoth_plt_06_D rus -
179 1127 F mammoth_plt_01 45Tigers_Plt_L mammoth_plt_01_D rus -
180 1128 F mammoth_plt_02 45Tigers_Plt_L mammoth_plt_02_D rus -
181 1129 F mammoth_plt_07 45Tigers_Plt_L mammoth_plt_07_D rus -
182 1130 F mammoth_plt_05 45Tigers_Plt_L mammoth_plt_05_D rus -
183 1131 F mammoth_plt_01 45Tigers_Plt_L mammoth_plt_01_D rus -
184 1286 F 45Tigers_Plt 45Tigers_Plt_L 45Tigers_Plt_D rus -
185 667 F COB 45Tigers_Plt_L Cobra_Plt_D - wor
186 124 F MarauderWL_Plt 45Tigers_Plt_L MarauderWL_Plt_d - -
187 123 F Marauders_Plt 45Tigers_Plt_L Marauders_Plt_D - -
188 1366 F Marine_Leader 45Tigers_Plt_L Marauders_Plt_D - -
189 137 F Marine_Combat 45Tigers_Plt_L Marauders_Plt_D - -
190 122 F JaguarWL_Plt 45Tigers_Plt_L JaguarWL_Plt_D - -
191 1367 F BuccnrsWL_Plt 45Tigers_Plt_L BUCCDETH - -
192 1261 F Pukov_Cap 45Tigers_Plt_L Pukov_Cap_D rus -
193 1450 F Mammoth_Plt_01 45Tigers_Plt_L Mammoth_Plt_01_D rus -
"""


def _load() -> tuple[Face, ...]:
    out = []
    for row in _ROWS.strip().splitlines():
        n, nid, side, talk, laugh, dying, hostile, friendly, *star = row.split()
        out.append(
            Face(
                int(n),
                int(nid),
                side,
                (talk, laugh, SQUADRON_FILM, dying),
                None if hostile == "-" else hostile,
                None if friendly == "-" else friendly,
                bool(star),
            )
        )
    return tuple(out)


FACES: tuple[Face, ...] = _load()
"""Faces by pilot number (0..193)."""


def face_film(pilot: int, head: int, mission: int = 99) -> str | None:
    """The film path of ``pilot``'s ``head`` movement; None for the dead channel (head > 3 or a
    pilot past the table). The 45th's films swap by mission number (from 14 the Volunteers')."""
    if not 0 <= head <= 3 or not 0 <= pilot < len(FACES):
        return None
    film = FACES[pilot].films[head]
    key = film.lower()
    if mission <= 13 and key in _SWAP:
        film = _SWAP[key]
    elif mission >= 14:
        film = _CASED.get(_BACK.get(key, film), film)
    return f"pilots\\{film}.fm8"


_BACK = {v.lower(): k for k, v in _SWAP.items()}
"""The 45th's swapped films back to the Volunteers' (lower case)."""
_CASED: dict[str, str] = {}
"""Every face film by its lower-case name, as the table first spells it."""
for _face in FACES:
    for _film in _face.films:
        _CASED.setdefault(_film.lower(), _film)


def moose(mission: int) -> int:
    """Moose's pilot number: 4 through mission 13, 2 after."""
    return 4 if mission <= 13 else 2
