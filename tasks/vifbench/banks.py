"""The value banks of VifBench (the Nsvif paper's §A.1) and the sentence banks of its offline writer
(written for this project; offline, no data files).

**Constraint values** (§A.1: "keyword inclusion, keyword exclusion, title, and subsection title
constraints are grouped together by writing topics"): ``TOPICS`` holds the 15 writing topics, each
with its title, three subsection titles, two keywords to include and two to exclude. ``TONES`` are
the four writing tones (15 × 4 = 60 instructions exhaust the C = 5 and C = 6 groups, as the paper
reports), ``WORD_COUNT_TARGETS`` the ten "around N words" options (around 500; Figure 9 asks for 540),
``WORDS_PER_SENTENCE`` the five per-sentence limits (Figure 10: at most 8).

**Sentences** of the offline writer are ``[lead,] subject [truly] predicate [with NOUN] [trail].``:

- ``topic.subjects[i]`` is a noun phrase holding exactly one marker word of its topic (the topic's
  entry in ``TOPIC_LEXICON``); subject ``i`` has ``SUBJECT_LENGTHS[i]`` words in every topic;
- ``PREDICATES[tone][j]`` is a verb phrase holding exactly one marker word of its tone (from
  ``TONE_LEXICON``); predicate ``j`` has ``PREDICATE_LENGTHS[j]`` words in every tone;
- ``topic.nouns`` are the nouns a sentence may end ``with``: the topic's keywords to include and to
  exclude and two more, so that a writer who is not told about a keyword constraint meets or breaks
  it by chance; ``EDGE_WORDS`` open or close a sentence (the same-first-and-last-word constraints),
  ``FILLER`` is one word inserted to change a count by one.

No marker word occurs in another category's phrases, and no keyword occurs (even inside a word) in a
topic's phrases, titles, edge words or other nouns (``tests/tasks/test_vifbench.py`` checks both).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Topic:
    """One writing topic with the constraint values grouped by it (§A.1) and its writer's subjects."""

    name: str
    title: str
    subsection_titles: tuple[str, ...]
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    others: tuple[str, ...]  # nouns a sentence may end with, besides the keywords
    subjects: tuple[str, ...]

    @property
    def nouns(self) -> tuple[str, ...]:
        """Every noun a sentence of this topic may end with."""
        return self.include + self.exclude + self.others


SUBJECT_LENGTHS = (3, 3, 4, 4, 4, 5, 5, 6)
PREDICATE_LENGTHS = (4, 4, 5, 5, 5, 6, 6, 7)

TOPICS: tuple[Topic, ...] = (
    Topic(
        "The benefits of agile project management",
        "Agile Teams That Deliver",
        ("Why Agile Works", "Daily Practice", "Measuring Progress"),
        ("collaboration", "flexibility"),
        ("waterfall", "bureaucracy"),
        ("feedback", "transparency"),
        (
            "the daily standup",
            "our product backlog",
            "the latest sprint retrospective",
            "the new scrum board",
            "our shared kanban wall",
            "every short iteration we run",
            "the velocity of our team",
            "each stakeholder at the review meeting",
        ),
    ),
    Topic(
        "Technology in education",
        "Classrooms Go Digital",
        ("Tools for Learning", "Teachers Adapt", "Looking Ahead"),
        ("engagement", "accessibility"),
        ("textbook", "chalkboard"),
        ("curiosity", "literacy"),
        (
            "the classroom tablet",
            "my school laptop",
            "the new grading software",
            "the interactive projector upstairs",
            "our weekly coding club",
            "the broadband in rural schools",
            "the tutoring chatbot for homework",
            "the webinar for parents last night",
        ),
    ),
    Topic(
        "The importance of mental health awareness",
        "Minds Matter",
        ("Breaking the Silence", "Everyday Habits", "Finding Support"),
        ("resilience", "wellbeing"),
        ("stigma", "taboo"),
        ("empathy", "balance"),
        (
            "the school therapist",
            "free counselling sessions",
            "a short mindfulness break",
            "talking openly about anxiety",
            "ten minutes of meditation",
            "the helpline for young people",
            "burnout among nurses and teachers",
            "the habit of journaling before bed",
        ),
    ),
    Topic(
        "Sustainable living in cities",
        "Greener City Life",
        ("Getting Around", "At Home", "Community Action"),
        ("recycling", "renewable"),
        ("plastic", "landfill"),
        ("compost", "efficiency"),
        (
            "my old bicycle",
            "the night tram",
            "the rooftop vegetable beds",
            "solar panels on flats",
            "the corner thrift shop",
            "better insulation in old buildings",
            "the allotment behind our street",
            "the carpool to the industrial park",
        ),
    ),
    Topic(
        "The future of remote work",
        "Working From Anywhere",
        ("New Routines", "Staying Connected", "What Comes Next"),
        ("productivity", "autonomy"),
        ("commute", "cubicle"),
        ("trust", "focus"),
        (
            "the morning videocall",
            "my coworking desk",
            "a decent noise-cancelling headset",
            "colleagues in another timezone",
            "my overflowing work inbox",
            "the digital whiteboard we share",
            "every freelancer on the project",
            "the async updates from our managers",
        ),
    ),
    Topic(
        "The role of art in society",
        "Why Art Matters",
        ("Art and Identity", "Public Spaces", "Supporting Artists"),
        ("creativity", "expression"),
        ("gallery", "auction"),
        ("culture", "dialogue"),
        (
            "the street mural",
            "that bronze sculpture",
            "a large blank canvas",
            "our local community theatre",
            "the poetry night downtown",
            "the graffiti under the bridge",
            "the summer exhibition at school",
            "the sketchbook I carry every day",
        ),
    ),
    Topic(
        "Healthy eating habits",
        "Eating Well Every Day",
        ("Building a Plate", "Smart Snacks", "Cooking at Home"),
        ("nutrition", "vegetables"),
        ("sugar", "junk"),
        ("hydration", "portions"),
        (
            "my morning porridge",
            "the spinach salad",
            "a bowl of lentils",
            "the baked salmon tonight",
            "plain yoghurt with berries",
            "the green smoothie after training",
            "wholegrain bread from the bakery",
            "the lunchbox I pack for work",
        ),
    ),
    Topic(
        "Climate change and coastal communities",
        "Rising Tides",
        ("Changing Shorelines", "Living With Water", "Planning for Tomorrow"),
        ("adaptation", "flooding"),
        ("hurricane", "catastrophe"),
        ("erosion", "migration"),
        (
            "the old seawall",
            "our small harbour",
            "the fishermen at dawn",
            "the sand dunes nearby",
            "the estuary behind town",
            "replanted mangroves along the bay",
            "the spring tide last week",
            "the wooden boardwalk by the lighthouse",
        ),
    ),
    Topic(
        "The impact of social media on teenagers",
        "Growing Up Online",
        ("Connection and Comparison", "Screen Time", "Healthy Boundaries"),
        ("identity", "friendship"),
        ("addiction", "cyberbullying"),
        ("confidence", "privacy"),
        (
            "her new smartphone",
            "a quick selfie",
            "the influencer everyone follows",
            "the trending hashtag today",
            "constant notifications at night",
            "the livestream after school yesterday",
            "the number of followers online",
            "every emoji in the class chat",
        ),
    ),
    Topic(
        "The value of learning a second language",
        "Speaking Beyond Borders",
        ("Opening Doors", "Learning Strategies", "Staying Motivated"),
        ("fluency", "vocabulary"),
        ("translation", "grammar"),
        ("pronunciation", "patience"),
        (
            "my Spanish phrasebook",
            "my daily flashcards",
            "the online language tutor",
            "the student exchange programme",
            "a strong regional dialect",
            "my accent when ordering coffee",
            "the podcast on my walk",
            "the penpal who writes from Lyon",
        ),
    ),
    Topic(
        "Space exploration and its benefits",
        "Reaching for the Stars",
        ("Science at the Frontier", "Everyday Spinoffs", "The Next Missions"),
        ("innovation", "discovery"),
        ("alien", "rocket"),
        ("inspiration", "cooperation"),
        (
            "the young astronaut",
            "the orbiting telescope",
            "the new Mars rover",
            "a stable low orbit",
            "the robotic spacecraft design",
            "the launchpad on the coast",
            "the moon landing in 1969",
            "the observatory on the mountain top",
        ),
    ),
    Topic(
        "The benefits of regular exercise",
        "Move More, Live Better",
        ("Body Benefits", "Mind Benefits", "Making It Stick"),
        ("stamina", "strength"),
        ("injury", "gym"),
        ("motivation", "recovery"),
        (
            "my morning jogging",
            "the yoga class",
            "a gentle pilates session",
            "swimming twice a week",
            "weekend cycling with friends",
            "stretching before I start work",
            "the dumbbells under my desk",
            "hiking in the hills on Sundays",
        ),
    ),
    Topic(
        "The history of the printing press",
        "Words in Print",
        ("Gutenberg's Workshop", "Spreading Ideas", "A Lasting Legacy"),
        ("literacy", "reformation"),
        ("internet", "digital"),
        ("pamphlets", "scholars"),
        (
            "the careful typesetter",
            "that yellowed parchment",
            "the ink stained hands",
            "a printed latin bible",
            "the monastery library shelves",
            "a carved woodblock from Asia",
            "the first bookshop in Venice",
            "every manuscript copied by hand before",
        ),
    ),
    Topic(
        "Urban gardening for beginners",
        "Grow Your Own",
        ("Choosing a Spot", "Seeds and Soil", "First Harvest"),
        ("tomatoes", "seedlings"),
        ("pesticide", "weeds"),
        ("sunlight", "watering"),
        (
            "my sunny balcony",
            "the wooden planter",
            "a small steel trowel",
            "fresh basil in pots",
            "the kitchen windowsill herbs",
            "the tiny greenhouse out back",
            "a neighbour's beehive in spring",
            "the wormery in the back yard",
        ),
    ),
    Topic(
        "The importance of financial literacy for young adults",
        "Money Skills for Life",
        ("Budgeting Basics", "Saving and Investing", "Avoiding Pitfalls"),
        ("retirement", "credit score"),
        ("loan", "debt"),
        ("spreadsheet", "discipline"),
        (
            "my first paycheck",
            "the old piggybank",
            "a small pension pot",
            "our first mortgage payment",
            "index stocks for beginners",
            "the tax return in April",
            "renters insurance for first flats",
            "the weekly allowance my parents gave",
        ),
    ),
)
TOPIC_BY_NAME = {topic.name: topic for topic in TOPICS}
TONES = ("optimistic", "pessimistic", "humorous", "urgent")
WORD_COUNT_TARGETS = (460, 470, 480, 490, 500, 510, 520, 530, 540, 550)
WORDS_PER_SENTENCE = (8, 10, 12, 15, 20)

PREDICATES: dict[str, tuple[str, ...]] = {
    "optimistic": (
        "makes me feel hopeful",
        "points to brighter days",
        "looks more promising every week",
        "is a wonderful sign overall",
        "leaves everyone thrilled and smiling",
        "keeps me cheerful through the week",
        "makes me confident about the future",
        "has left the whole family really delighted",
    ),
    "pessimistic": (
        "feels completely hopeless now",
        "seems doomed to fail",
        "looks bleak and rather grim",
        "was a dreadful waste overall",
        "only gets worse each month",
        "leaves me gloomy for the week",
        "is heading towards a certain disaster",
        "makes all our careful effort seem pointless",
    ),
    "humorous": (
        "makes everyone giggle loudly",
        "looks silly in photos",
        "is a ridiculous little story",
        "became a running joke here",
        "is totally hilarious every time",
        "makes the neighbours chuckle all day",
        "has an absurd habit of squeaking",
        "turns every visit into a clownish parade",
    ),
    "urgent": (
        "needs our attention immediately",
        "is an urgent priority",
        "means we must hurry up",
        "has a deadline this Friday",
        "requires an emergency plan now",
        "must be handled very quickly indeed",
        "is critical for everyone involved here",
        "demands action before the deadline arrives tomorrow",
    ),
}

EDGE_WORDS = ("today", "tonight", "lately", "honestly", "frankly", "anyway", "meanwhile", "somehow")
FILLER = "truly"
