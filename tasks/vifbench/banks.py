"""Sentence banks for synthetic VifBench outputs (written for this project; offline, no data files).

A sentence is ``[lead,] subject [truly] predicate [near the NOUN] [trail].`` where

- ``SUBJECTS[topic][i]`` is a noun phrase holding exactly one marker word of its topic (from
  ``TOPIC_LEXICON``); subject ``i`` has the same number of words in every topic, so re-writing a
  text on another topic keeps every word count;
- ``PREDICATES[tone][j]`` is a verb phrase holding exactly one marker word of its tone (from
  ``TONE_LEXICON``); predicate ``j`` has the same number of words in every tone;
- ``NOUNS`` are neutral nouns for the ``near the NOUN`` tail (the keyword pools), ``EDGE_WORDS``
  neutral adverbs that open or close a sentence (for the same-first-and-last-word constraints),
  ``FILLER`` one neutral word inserted to change a count by one.

No bank word is a marker of another category, an edge word or the filler, and no noun occurs in a bank
phrase even inside a word (keywords are matched as case-insensitive substrings; a test checks it).
There are 15 topics (the paper's number) and 5 tones.
"""

from __future__ import annotations

SUBJECT_LENGTHS = (3, 3, 4, 4, 4, 5, 5, 6)
PREDICATE_LENGTHS = (4, 4, 5, 5, 5, 6, 6, 7)

SUBJECTS: dict[str, tuple[str, ...]] = {
    "technology": (
        "the new laptop",
        "our office software",
        "the little kitchen robot",
        "my old cracked smartphone",
        "the village internet connection",
        "the computer in the library",
        "every gadget on my desk",
        "the algorithm behind the music app",
    ),
    "nature": (
        "the quiet forest",
        "the winding river",
        "the snowy mountain pass",
        "the wide green meadow",
        "that ancient oak tree",
        "the waterfall behind the cabin",
        "the wildflowers along the path",
        "the glacier at the valley head",
    ),
    "food": (
        "the lentil soup",
        "the fresh bread",
        "the pasta at dinner",
        "the pancakes this morning",
        "the spicy curry downstairs",
        "the salad from the market",
        "the cheese in the fridge",
        "the dumplings at the corner stall",
    ),
    "sports": (
        "the football final",
        "the city marathon",
        "the tennis match yesterday",
        "our basketball team practice",
        "the swimming race results",
        "the cycling tour this summer",
        "the goalkeeper of our club",
        "the stadium near the old station",
    ),
    "travel": (
        "the airport lounge",
        "my passport photo",
        "the luggage at arrivals",
        "our seaside hotel room",
        "my battered old suitcase",
        "the journey to the coast",
        "the voyage across the bay",
        "the itinerary for the long weekend",
    ),
    "health": (
        "the new doctor",
        "my morning vitamins",
        "the clinic waiting room",
        "my regular sleep schedule",
        "the new exercise plan",
        "the nurse on the ward",
        "the medicine in the cabinet",
        "the therapy sessions at the centre",
    ),
    "music": (
        "the old guitar",
        "the spring concert",
        "the upright piano upstairs",
        "the school orchestra rehearsal",
        "that simple melody again",
        "the drummer in the band",
        "the new album from them",
        "the choir at the village church",
    ),
    "art": (
        "the large painting",
        "the bronze sculpture",
        "the blank canvas upstairs",
        "the small gallery downtown",
        "my quick pencil sketch",
        "the portrait of my grandmother",
        "the museum across the square",
        "the easel in the back room",
    ),
    "science": (
        "the latest experiment",
        "the university laboratory",
        "the old brass microscope",
        "the borrowed backyard telescope",
        "every molecule we studied",
        "the physics course this week",
        "the chemistry set from school",
        "the hypothesis in her final paper",
    ),
    "history": (
        "the ruined castle",
        "the roman empire",
        "the medieval town walls",
        "the city archive records",
        "the pharaoh exhibit downstairs",
        "the revolution of the workers",
        "the dynasty that ruled here",
        "the manuscript found in the cellar",
    ),
    "education": (
        "the bright classroom",
        "my geography teacher",
        "the weekend homework assignment",
        "the final exam results",
        "the heavy maths textbook",
        "the tutor from next door",
        "the semester ahead of us",
        "the graduation ceremony in the park",
    ),
    "finance": (
        "the household budget",
        "my holiday savings",
        "the small investment fund",
        "our new mortgage payment",
        "the quarterly taxes due",
        "the salary at the firm",
        "the loan from the bank",
        "the pension my aunt saved for",
    ),
    "fashion": (
        "the leather jacket",
        "the silk dress",
        "my new white sneakers",
        "the woollen scarf again",
        "the little boutique nearby",
        "the runway show in Milan",
        "the wardrobe in my room",
        "the necklace from the flea market",
    ),
    "weather": (
        "the heavy rain",
        "the evening thunderstorm",
        "the thick morning fog",
        "the warm afternoon sunshine",
        "the first snowfall here",
        "the breeze off the sea",
        "the forecast for the weekend",
        "the drizzle on the kitchen window",
    ),
    "animals": (
        "the playful puppy",
        "the tiny kitten",
        "the talking green parrot",
        "the white rabbit outside",
        "the old farm horse",
        "the hamster in the cage",
        "the tortoise in the garden",
        "the dolphin we saw last summer",
    ),
}

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
    "nostalgic": (
        "brings back childhood summers",
        "is full of memories",
        "makes me remember simpler times",
        "fills me with quiet nostalgia",
        "belongs to a bygone era",
        "makes us reminisce about old friends",
        "feels like a page from yesteryear",
        "is something my parents recall so fondly",
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

NOUNS = (
    "lantern",
    "ribbon",
    "compass",
    "teapot",
    "blanket",
    "umbrella",
    "mirror",
    "candle",
    "notebook",
    "thimble",
    "ladder",
    "violin",
    "pillow",
    "kettle",
    "anchor",
    "feather",
)
EDGE_WORDS = ("today", "tonight", "lately", "honestly", "frankly", "anyway", "meanwhile", "somehow")
FILLER = "truly"
TITLES = (
    "A Short Report",
    "Field Notes",
    "Weekly Update",
    "Notes From Home",
    "A Brief Account",
    "Things Worth Saying",
    "An Ordinary Week",
    "Small Observations",
)
SECTION_NAMES = ("Part One", "Part Two", "Part Three", "Part Four", "Part Five", "Part Six")
