"""ROAD-R's 243 requirements over its 41 labels, as data (used by the ``road-r`` task in driving.py).

Source: the requirements published with ROAD-R (Giunchiglia, Stoian, Khan, Cuzzolin, Lukasiewicz,
"ROAD-R: the autonomous driving dataset with logical requirements", Machine Learning 112, 2023),
distributed as ``constraints/constraints.txt`` in github.com/mihaela-stoian/ROAD-R-2023-Challenge
(commit f45828e89bfa9b6c8f18f3fba7f3f5c8b36d4aab, licence CC BY-NC-SA 4.0). That file writes each
requirement as ``0.0 HEAD :- BODY`` over 0-based label indices, ``nK`` meaning "not label K". Here the
same 243 requirements are written, in the same order, in our notation over ROAD-R's label names:

    BODY -> HEAD        body literals joined by " & ", "~" for "not"

meaning "if every body literal holds, the head literal holds" (one clause: ¬body ∨ head). Label names
are case-sensitive: ``Xing`` is the action "crossing", ``xing`` the location "at a crossing".
"""

# ROAD-R's label order (the order of its annotation files): 10 agent types, 19 actions, 12 locations.
AGENT_LABELS = ("Ped", "Car", "Cyc", "Mobike", "MedVeh", "LarVeh", "Bus", "EmVeh", "TL", "OthTL")
ACTION_LABELS = (
    "Red",
    "Amber",
    "Green",
    "MovAway",
    "MovTow",
    "Mov",
    "Brake",
    "Stop",
    "IncatLft",
    "IncatRht",
    "HazLit",
    "TurLft",
    "TurRht",
    "Ovtak",
    "Wait2X",
    "XingFmLft",
    "XingFmRht",
    "Xing",
    "PushObj",
)
LOCATION_LABELS = (
    "VehLane",
    "OutgoLane",
    "OutgoCycLane",
    "IncomLane",
    "IncomCycLane",
    "Pav",
    "LftPav",
    "RhtPav",
    "Jun",
    "xing",
    "BusStop",
    "parking",
)
LABELS = AGENT_LABELS + ACTION_LABELS + LOCATION_LABELS

REQUIREMENTS_TEXT = """\
PushObj -> Ped
Ped & ~MovAway & ~MovTow & ~Mov & ~Stop & ~TurLft & ~TurRht & ~Wait2X & ~XingFmLft & ~XingFmRht & ~Xing -> PushObj
XingFmRht & ~Car & ~Cyc & ~Mobike & ~MedVeh & ~LarVeh & ~Bus & ~EmVeh -> Ped
XingFmLft & ~Car & ~Cyc & ~Mobike & ~MedVeh & ~LarVeh & ~Bus & ~EmVeh -> Ped
Wait2X & ~Cyc -> Ped
Stop & ~Car & ~Cyc & ~Mobike & ~MedVeh & ~LarVeh & ~Bus & ~EmVeh -> Ped
Mov & ~Car & ~Cyc & ~Mobike & ~MedVeh & ~LarVeh & ~Bus & ~EmVeh -> Ped
MovTow & ~Car & ~Cyc & ~Mobike & ~MedVeh & ~LarVeh & ~Bus & ~EmVeh -> Ped
MovAway & ~Car & ~Cyc & ~Mobike & ~MedVeh & ~LarVeh & ~Bus & ~EmVeh -> Ped
EmVeh & ~MovAway & ~MovTow & ~Mov & ~Brake & ~Stop & ~IncatLft & ~IncatRht & ~HazLit & ~TurLft & ~TurRht & ~XingFmRht & ~XingFmLft & ~Xing -> Ovtak
HazLit & ~Car & ~MedVeh & ~LarVeh & ~Bus & ~Mobike -> EmVeh
Bus & ~MovAway & ~MovTow & ~Mov & ~Brake & ~Stop & ~IncatLft & ~IncatRht & ~HazLit & ~TurLft & ~TurRht & ~XingFmRht & ~XingFmLft & ~Xing -> Ovtak
LarVeh & ~MovAway & ~MovTow & ~Mov & ~Brake & ~Stop & ~IncatLft & ~IncatRht & ~HazLit & ~TurLft & ~TurRht & ~XingFmRht & ~XingFmLft & ~Xing -> Ovtak
Green & ~TL -> OthTL
Amber & ~TL -> OthTL
Red & ~TL -> OthTL
Mobike & ~MovAway & ~MovTow & ~Mov & ~Brake & ~Stop & ~IncatLft & ~IncatRht & ~HazLit & ~TurLft & ~TurRht & ~XingFmRht & ~XingFmLft & ~Xing -> Ovtak
Cyc & ~MovAway & ~MovTow & ~Mov & ~Brake & ~Stop & ~IncatLft & ~IncatRht & ~TurLft & ~TurRht & ~Ovtak & ~Wait2X & ~XingFmLft & ~XingFmRht -> Xing
Ovtak & ~MedVeh & ~LarVeh & ~Bus & ~Mobike & ~EmVeh & ~Car -> Cyc
IncatRht & ~MedVeh & ~LarVeh & ~Bus & ~Mobike & ~EmVeh & ~Car -> Cyc
IncatLft & ~MedVeh & ~LarVeh & ~Bus & ~Mobike & ~EmVeh & ~Car -> Cyc
Brake & ~MedVeh & ~LarVeh & ~Bus & ~Mobike & ~EmVeh & ~Car -> Cyc
Car & ~MovAway & ~MovTow & ~Mov & ~Brake & ~Stop & ~IncatLft & ~IncatRht & ~HazLit & ~TurLft & ~TurRht & ~XingFmRht & ~XingFmLft & ~Xing -> Ovtak
TurRht & ~Cyc & ~Mobike & ~MedVeh & ~LarVeh & ~Bus & ~EmVeh -> Car
TurLft & ~Cyc & ~Mobike & ~MedVeh & ~LarVeh & ~Bus & ~EmVeh -> Car
Cyc -> ~Car
Mobike -> ~Car
MedVeh -> ~Car
LarVeh -> ~Car
Bus -> ~Car
Mobike -> ~Cyc
EmVeh -> ~Car
TL -> ~Car
MedVeh -> ~Cyc
OthTL -> ~Car
Red -> ~Car
LarVeh -> ~Cyc
Amber -> ~Car
Green -> ~Car
Bus -> ~Cyc
MedVeh -> ~Mobike
EmVeh -> ~Cyc
LarVeh -> ~Mobike
TL -> ~Cyc
OthTL -> ~Cyc
Bus -> ~Mobike
Red -> ~Cyc
LarVeh -> ~MedVeh
EmVeh -> ~Mobike
Amber -> ~Cyc
Wait2X -> ~Car
Green -> ~Cyc
TL -> ~Mobike
Bus -> ~MedVeh
Xing -> ~Car
OthTL -> ~Mobike
PushObj -> ~Car
EmVeh -> ~MedVeh
Red -> ~Mobike
Bus -> ~LarVeh
Cyc -> ~Brake
TL -> ~MedVeh
Amber -> ~Mobike
EmVeh -> ~LarVeh
Green -> ~Mobike
OthTL -> ~MedVeh
Cyc -> ~HazLit
Red -> ~MedVeh
TL -> ~LarVeh
Ped -> ~Car
~Car & ~Cyc & ~Mobike & ~MedVeh & ~LarVeh & ~Bus & ~EmVeh & ~TL & ~OthTL -> Ped
EmVeh -> ~Bus
Amber -> ~MedVeh
OthTL -> ~LarVeh
Green -> ~MedVeh
TL -> ~Bus
Red -> ~LarVeh
OthTL -> ~Bus
Amber -> ~LarVeh
PushObj -> ~Cyc
TL -> ~EmVeh
Green -> ~LarVeh
Red -> ~Bus
OthTL -> ~EmVeh
Amber -> ~Bus
Red -> ~EmVeh
Wait2X -> ~Mobike
Green -> ~Bus
OthTL -> ~TL
Amber -> ~EmVeh
Xing -> ~Mobike
Ped -> ~Cyc
~Cyc & Xing -> Ped
PushObj -> ~Mobike
Green -> ~EmVeh
Wait2X -> ~MedVeh
MovAway -> ~TL
Xing -> ~MedVeh
Amber -> ~Red
PushObj -> ~MedVeh
TL -> ~MovTow
MovAway -> ~OthTL
Wait2X -> ~LarVeh
Mov -> ~TL
Green -> ~Red
Ped -> ~Mobike
OthTL -> ~MovTow
Brake -> ~TL
MovAway -> ~Red
Green -> ~Amber
Xing -> ~LarVeh
Mov -> ~OthTL
TL -> ~Stop
PushObj -> ~LarVeh
MovTow -> ~Red
MovAway -> ~Amber
Wait2X -> ~Bus
IncatLft -> ~TL
Brake -> ~OthTL
Mov -> ~Red
IncatRht -> ~TL
OthTL -> ~Stop
MovTow -> ~Amber
MovAway -> ~Green
HazLit -> ~TL
Brake -> ~Red
Xing -> ~Bus
IncatLft -> ~OthTL
Ped -> ~MedVeh
Mov -> ~Amber
PushObj -> ~Bus
Wait2X -> ~EmVeh
TurLft -> ~TL
MovTow -> ~Green
Stop -> ~Red
IncatRht -> ~OthTL
TL -> ~TurRht
Brake -> ~Amber
HazLit -> ~OthTL
IncatLft -> ~Red
Mov -> ~Green
Ovtak -> ~TL
Stop -> ~Amber
Xing -> ~EmVeh
TurLft -> ~OthTL
IncatRht -> ~Red
Wait2X -> ~TL
Brake -> ~Green
Mov -> ~MovAway
PushObj -> ~EmVeh
OthTL -> ~TurRht
IncatLft -> ~Amber
XingFmLft -> ~TL
HazLit -> ~Red
Stop -> ~Green
Ped -> ~LarVeh
Ovtak -> ~OthTL
XingFmRht -> ~TL
IncatRht -> ~Amber
TurLft -> ~Red
Mov -> ~MovTow
Xing -> ~TL
Wait2X -> ~OthTL
IncatLft -> ~Green
TurRht -> ~Red
HazLit -> ~Amber
PushObj -> ~TL
XingFmLft -> ~OthTL
IncatRht -> ~Green
Ovtak -> ~Red
TurLft -> ~Amber
XingFmRht -> ~OthTL
Wait2X -> ~Red
HazLit -> ~Green
TurRht -> ~Amber
Xing -> ~OthTL
Ped -> ~Bus
XingFmLft -> ~Red
PushObj -> ~OthTL
TurLft -> ~Green
Ovtak -> ~Amber
Stop -> ~Mov
XingFmRht -> ~Red
Wait2X -> ~Amber
TurRht -> ~Green
Xing -> ~Red
XingFmLft -> ~Amber
Ovtak -> ~Green
XingFmRht -> ~Amber
Ped -> ~EmVeh
Wait2X -> ~Green
Xing -> ~Amber
XingFmLft -> ~Green
XingFmRht -> ~Green
Xing -> ~Green
Ped -> ~TL
IncatRht -> ~IncatLft
Ped -> ~OthTL
Wait2X -> ~Brake
Ped -> ~Red
Brake -> ~Xing
IncatLft -> ~Wait2X
PushObj -> ~Brake
Ped -> ~Amber
IncatRht -> ~Wait2X
Ped -> ~Green
Ovtak -> ~Wait2X
XingFmLft -> ~Wait2X
XingFmRht -> ~Wait2X
Xing -> ~Wait2X
Ped -> ~Brake
IncatLft -> ~Ped
IncatRht -> ~Ped
Ped -> ~HazLit
~OutgoLane & ~OutgoCycLane & ~IncomLane & ~IncomCycLane & ~Pav & ~LftPav & ~RhtPav & ~Jun & ~xing & ~BusStop & ~parking & ~TL & ~OthTL -> VehLane
OutgoCycLane -> ~OutgoLane
Ovtak -> ~Ped
IncomCycLane -> ~VehLane
IncomCycLane -> ~OutgoLane
OutgoCycLane -> ~IncomLane
Pav -> ~OutgoLane
OutgoCycLane -> ~IncomCycLane
RhtPav -> ~OutgoLane
Pav -> ~IncomCycLane
OutgoLane -> ~xing
parking -> ~VehLane
OutgoLane -> ~BusStop
parking -> ~OutgoLane
OutgoCycLane -> ~BusStop
OutgoCycLane -> ~parking
IncomCycLane -> ~xing
RhtPav -> ~LftPav
parking -> ~IncomLane
BusStop -> ~IncomCycLane
parking -> ~IncomCycLane
parking -> ~Pav
parking -> ~LftPav
parking -> ~RhtPav
parking -> ~Jun
BusStop -> ~xing
parking -> ~xing
parking -> ~BusStop
MedVeh & ~IncomLane & ~MovAway & ~MovTow & ~Mov & ~Brake & ~Stop & ~IncatLft & ~IncatRht & ~HazLit & ~TurLft & ~TurRht & ~XingFmLft & ~XingFmRht -> Ovtak
"""

REQUIREMENTS: tuple[str, ...] = tuple(line for line in REQUIREMENTS_TEXT.splitlines() if line.strip())
