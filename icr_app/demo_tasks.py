"""Built-in demo tasks, written by the project (not taken from any dataset)."""

DEMO_TASKS: dict[str, list[tuple[str, str]]] = {
    "sentiment": [
        ("The soup was cold and the waiter ignored us all night.", "negative"),
        ("This blender crushes ice in seconds and cleans up easily.", "positive"),
        ("Our server was warm, funny, and remembered every allergy.", "positive"),
        ("The film dragged on for three hours and I nearly fell asleep.", "negative"),
        ("The charger stopped working after two days.", "negative"),
        ("A gorgeous, heartfelt movie with a soundtrack I keep humming.", "positive"),
        ("The pasta was soggy and the sauce tasted like it came from a can.", "negative"),
        ("These headphones are comfortable enough to wear all day.", "positive"),
        ("Best tacos I have had in years, and the prices are fair.", "positive"),
        ("The plot made no sense and the ending felt lazy.", "negative"),
        ("The zipper broke the first time I opened the bag.", "negative"),
        ("We waited an hour for a table even though we had a reservation.", "negative"),
        ("The lead actress gives a stunning, unforgettable performance.", "positive"),
        ("The lamp looks elegant and the light is soft and even.", "positive"),
        ("Cheap plastic, flimsy buttons, and the battery dies by noon.", "negative"),
        ("I laughed from the opening scene to the final credits.", "positive"),
        ("The steak arrived burnt and the fries were stale.", "negative"),
        ("Setup took five minutes and the app works flawlessly.", "positive"),
        ("The dessert menu alone is worth the trip.", "positive"),
        ("The dialogue was wooden and the jokes fell completely flat.", "negative"),
        ("The shoes gave me blisters within an hour of walking.", "negative"),
        ("A clever, tightly paced thriller that kept me guessing.", "positive"),
        ("This vacuum picks up pet hair better than anything I have owned.", "positive"),
        ("The coffee was bitter and the pastries were dry.", "negative"),
        ("The special effects looked cheap and distracting.", "negative"),
        ("Friendly staff, cozy room, and the bread is baked fresh every morning.", "positive"),
        ("The printer jams on almost every page.", "negative"),
        ("The animation is beautiful and the story made my kids cheer.", "positive"),
        ("The knife holds a sharp edge even after months of use.", "positive"),
        ("Our order was wrong twice and nobody apologized.", "negative"),
        ("I walked out halfway through because it was so boring.", "negative"),
        ("The curry was rich, fragrant, and perfectly spiced.", "positive"),
        ("The documentary was moving and surprisingly hopeful.", "positive"),
        ("The screen scratches if you so much as look at it.", "negative"),
        ("The music was so loud we could not hear each other talk.", "negative"),
        ("This backpack survived a week of rain and kept everything dry.", "positive"),
        ("The sequel ruins everything that made the first movie great.", "negative"),
        ("The sushi was fresh and the chef sent out a free appetizer.", "positive"),
        ("Every actor in the cast seems to be having a great time.", "positive"),
        ("The instructions were missing and half the screws did not fit.", "negative"),
        ("The salad was wilted and the bill had charges we never ordered.", "negative"),
        ("The kettle boils water quickly and shuts off on its own.", "positive"),
        ("The characters were so annoying that I rooted for the villain.", "negative"),
        ("Lovely patio, quick service, and generous portions.", "positive"),
        ("A touching story that stayed with me for days.", "positive"),
        ("The mattress started sagging after only a month.", "negative"),
        ("The burger was greasy and the bun fell apart in my hands.", "negative"),
        ("The camera takes sharp photos even in dim light.", "positive"),
    ],
    "headline-topic": [
        ("Underdog club stuns league leaders with late winner in rain-soaked derby", "sports"),
        ("Shares of regional bank slide after surprise profit warning", "business"),
        ("Astronomers spot icy comet heading toward the inner solar system", "science"),
        ("Senate passes budget bill after lengthy overnight session", "politics"),
        ("Coffee chain plans to open 200 new stores next year", "business"),
        ("Veteran goalkeeper announces retirement after 18 seasons", "sports"),
        ("Prime minister reshuffles cabinet ahead of autumn elections", "politics"),
        ("Researchers map the genome of a rare deep-sea octopus", "science"),
        ("Tennis star withdraws from open with wrist injury", "sports"),
        ("New fossil suggests early birds could glide between trees", "science"),
        ("Carmaker recalls 40,000 vehicles over faulty brakes", "business"),
        ("Governor vetoes controversial zoning measure", "politics"),
        ("Opposition party gains ground in latest parliamentary polls", "politics"),
        ("Home team clinches playoff berth with overtime victory", "sports"),
        ("Startup raises $50 million to expand grocery delivery service", "business"),
        ("Physicists cool atoms to a billionth of a degree above absolute zero", "science"),
        ("Telescope captures clearest image yet of distant galaxy cluster", "science"),
        ("Mayor announces bid for second term", "politics"),
        ("Swimmer claims third gold medal of the championships", "sports"),
        ("Retail sales jump ahead of the holiday season", "business"),
        ("Airline posts record quarterly earnings as travel demand rebounds", "business"),
        ("Scientists discover new species of frog in remote rainforest", "science"),
        ("Basketball coach fired after ten straight losses", "sports"),
        ("Lawmakers debate new limits on campaign donations", "politics"),
        ("Rookie pitcher throws no-hitter in major league debut", "sports"),
        ("Foreign ministers meet to discuss disputed border treaty", "politics"),
        ("Tech giant agrees to buy rival software firm in $3 billion deal", "business"),
        ("Mars rover finds traces of an ancient lake bed", "science"),
        ("Chemists develop plastic that breaks down in seawater within weeks", "science"),
        ("Oil prices fall as supply concerns ease", "business"),
        ("Voter turnout hits record high in local elections", "politics"),
        ("Rugby side names new captain for autumn test series", "sports"),
        ("President signs executive order on federal hiring", "politics"),
        ("Boxing champion retains title with unanimous decision", "sports"),
        ("Ocean sensors reveal warming in deep Atlantic currents", "science"),
        ("Toy maker cuts 500 jobs amid slowing sales", "business"),
        ("Grocery chain merger wins shareholder approval", "business"),
        ("Geologists detect slow earthquake beneath the Pacific seafloor", "science"),
        ("Parliament rejects proposal to lower the voting age", "politics"),
        ("Teenage skier wins her first World Cup slalom race", "sports"),
        ("Golfer sinks long putt on final hole to win playoff", "sports"),
        ("Coalition government collapses after key party withdraws", "politics"),
        ("Biologists track migrating butterflies with tiny radio tags", "science"),
        ("Stock market closes at all-time high led by energy shares", "business"),
        ("Lab-grown heart tissue beats on its own for the first time", "science"),
        ("Candidates clash over immigration in televised debate", "politics"),
        ("Central bank holds interest rates steady for third month", "business"),
        ("Local runner sets course record at city marathon", "sports"),
    ],
    "antonyms": [
        ("hot", "cold"),
        ("tall", "short"),
        ("happy", "sad"),
        ("fast", "slow"),
        ("early", "late"),
        ("full", "empty"),
        ("rich", "poor"),
        ("strong", "weak"),
        ("wet", "dry"),
        ("young", "old"),
        ("day", "night"),
        ("win", "lose"),
        ("push", "pull"),
        ("buy", "sell"),
        ("above", "below"),
        ("inside", "outside"),
        ("loud", "quiet"),
        ("thick", "thin"),
        ("wide", "narrow"),
        ("true", "false"),
        ("love", "hate"),
        ("clean", "dirty"),
        ("ancient", "modern"),
        ("deep", "shallow"),
        ("cheap", "expensive"),
        ("increase", "decrease"),
        ("accept", "reject"),
        ("maximum", "minimum"),
        ("north", "south"),
        ("asleep", "awake"),
        ("rough", "smooth"),
        ("heavy", "light"),
        ("polite", "rude"),
        ("possible", "impossible"),
        ("always", "never"),
        ("top", "bottom"),
        ("safe", "dangerous"),
        ("guilty", "innocent"),
        ("entrance", "exit"),
        ("ascend", "descend"),
        ("import", "export"),
        ("inhale", "exhale"),
        ("include", "exclude"),
        ("permanent", "temporary"),
        ("before", "after"),
        ("forget", "remember"),
        ("plural", "singular"),
        ("victory", "defeat"),
    ],
    "country-capital": [
        ("France", "Paris"),
        ("Japan", "Tokyo"),
        ("Kenya", "Nairobi"),
        ("Canada", "Ottawa"),
        ("Greece", "Athens"),
        ("Peru", "Lima"),
        ("Thailand", "Bangkok"),
        ("Germany", "Berlin"),
        ("Australia", "Canberra"),
        ("Morocco", "Rabat"),
        ("Norway", "Oslo"),
        ("Argentina", "Buenos Aires"),
        ("South Korea", "Seoul"),
        ("Italy", "Rome"),
        ("Nigeria", "Abuja"),
        ("Sweden", "Stockholm"),
        ("Mexico", "Mexico City"),
        ("Vietnam", "Hanoi"),
        ("Ireland", "Dublin"),
        ("Ghana", "Accra"),
        ("India", "New Delhi"),
        ("Spain", "Madrid"),
        ("Chile", "Santiago"),
        ("Finland", "Helsinki"),
        ("Saudi Arabia", "Riyadh"),
        ("Poland", "Warsaw"),
        ("New Zealand", "Wellington"),
        ("Ethiopia", "Addis Ababa"),
        ("Portugal", "Lisbon"),
        ("China", "Beijing"),
        ("Cuba", "Havana"),
        ("Austria", "Vienna"),
        ("Philippines", "Manila"),
        ("Turkey", "Ankara"),
        ("Denmark", "Copenhagen"),
        ("Venezuela", "Caracas"),
        ("Hungary", "Budapest"),
        ("Pakistan", "Islamabad"),
        ("Russia", "Moscow"),
        ("Ecuador", "Quito"),
        ("Czech Republic", "Prague"),
        ("Iran", "Tehran"),
        ("Belgium", "Brussels"),
        ("Jamaica", "Kingston"),
        ("Romania", "Bucharest"),
        ("Iceland", "Reykjavik"),
        ("Croatia", "Zagreb"),
        ("Ukraine", "Kyiv"),
    ],
    "past-tense": [
        ("walk", "walked"),
        ("go", "went"),
        ("jump", "jumped"),
        ("eat", "ate"),
        ("play", "played"),
        ("see", "saw"),
        ("cry", "cried"),
        ("take", "took"),
        ("stop", "stopped"),
        ("write", "wrote"),
        ("plan", "planned"),
        ("swim", "swam"),
        ("carry", "carried"),
        ("think", "thought"),
        ("dance", "danced"),
        ("buy", "bought"),
        ("open", "opened"),
        ("bring", "brought"),
        ("try", "tried"),
        ("sing", "sang"),
        ("laugh", "laughed"),
        ("drink", "drank"),
        ("clean", "cleaned"),
        ("fly", "flew"),
        ("watch", "watched"),
        ("begin", "began"),
        ("smile", "smiled"),
        ("choose", "chose"),
        ("listen", "listened"),
        ("freeze", "froze"),
        ("study", "studied"),
        ("teach", "taught"),
        ("arrive", "arrived"),
        ("catch", "caught"),
        ("hope", "hoped"),
        ("drive", "drove"),
        ("enjoy", "enjoyed"),
        ("speak", "spoke"),
        ("climb", "climbed"),
        ("forget", "forgot"),
        ("break", "broke"),
        ("visit", "visited"),
        ("run", "ran"),
        ("decide", "decided"),
        ("sleep", "slept"),
        ("wait", "waited"),
        ("give", "gave"),
        ("know", "knew"),
    ],
    "emotion": [
        ("I just got the job offer I have been hoping for!", "joy"),
        ("I am furious that my neighbor dented my car and drove away.", "anger"),
        ("I hear footsteps downstairs and I live alone.", "fear"),
        ("I miss my grandmother so much since she passed away.", "sadness"),
        ("My best friend surprised me with tickets to my favorite band.", "joy"),
        ("My hands shake every time the plane hits turbulence.", "fear"),
        ("They cancelled my flight again without any explanation, and I am livid.", "anger"),
        ("My best friend moved across the country and the house feels empty.", "sadness"),
        ("I cried all night after we broke up.", "sadness"),
        ("We finally paid off the house and I could not stop smiling.", "joy"),
        ("I cannot believe he took credit for my work in front of the boss.", "anger"),
        ("I am terrified the biopsy results will be bad.", "fear"),
        ("I froze when I saw the snake right next to my foot.", "fear"),
        ("Nobody came to my birthday party.", "sadness"),
        ("I passed my driving test on the first try!", "joy"),
        ("The landlord raised the rent again and still will not fix the heater.", "anger"),
        ("I am sick of being interrupted every time I speak in meetings.", "anger"),
        ("My sister had her baby this morning and everyone is healthy.", "joy"),
        ("I keep worrying that I will lose my job in the layoffs.", "fear"),
        ("I had to give away my cat because my new apartment bans pets.", "sadness"),
        ("I spent the whole afternoon laughing with my grandparents.", "joy"),
        ("I feel lonely eating dinner by myself every night.", "sadness"),
        ("Someone stole my bike even though it was locked.", "anger"),
        ("The lights went out during the storm and I could not stop trembling.", "fear"),
        ("I am scared to walk home through that dark alley.", "fear"),
        ("The garden I planted in spring is finally blooming.", "joy"),
        ("The old tree I used to climb as a child was cut down today.", "sadness"),
        ("I am so mad that the store refused to honor the warranty.", "anger"),
        ("My roommate ate my lunch again and lied about it.", "anger"),
        ("My heart pounded as the car skidded on the ice.", "fear"),
        ("I won the school art contest and my parents are beaming.", "joy"),
        ("I did not get the part, and I feel like giving up.", "sadness"),
        ("Our family dog died this morning.", "sadness"),
        ("I dread going to the dentist tomorrow.", "fear"),
        ("It makes my blood boil when people litter in the park.", "anger"),
        ("I feel like dancing after hearing the good news.", "joy"),
        ("My puppy wagged her whole body when I came home.", "joy"),
        ("I panicked when I could not find my child in the crowd.", "fear"),
        ("I keep looking at old photos and wishing things were different.", "sadness"),
        ("I slammed the door after he insulted my family.", "anger"),
        ("I waited on hold for two hours just to be hung up on.", "anger"),
        ("I got into my first-choice university today.", "joy"),
        ("Something is scratching at my window in the middle of the night.", "fear"),
        ("My son left for college and his room is so quiet now.", "sadness"),
        ("Standing on the edge of the cliff made my knees go weak.", "fear"),
        ("How dare they read my private messages!", "anger"),
        ("I lost touch with my oldest friend and it still hurts.", "sadness"),
        ("Our team won the championship and I am over the moon.", "joy"),
    ],
    "movie-review": [
        ("The final twist recontextualizes everything before it, and a second viewing proved even "
         "more rewarding.", "positive"),
        ("Its runtime is long, yet I never once checked my watch, which says everything about how "
         "tightly this thriller is wound.", "positive"),
        ("The costumes are lovely, which is the nicest thing I can say about this interminable "
         "period drama.", "negative"),
        ("The cinematography alone would justify the ticket, and the story turns out to be just as "
         "ravishing.", "positive"),
        ("The documentary raises fascinating questions, then answers none of them and pads out the "
         "rest with repetitive interviews.", "negative"),
        ("Every performance rings true in this raw, unflinching portrait of a family coming apart "
         "and finding its way back.", "positive"),
        ("Rarely does a horror movie this frightening also have something thoughtful to say about grief.", "positive"),
        ("This documentary about deep-sea divers is both thrilling and humane, and I already want to"
         " see it again.", "positive"),
        ("I went in skeptical of yet another zombie picture and walked out grinning; the director "
         "squeezes genuine surprises from tired material.", "positive"),
        ("I wanted to like this gentle indie drama, but its whimsy grows exhausting long before the "
         "credits.", "negative"),
        ("A handsome cast wanders through a script that seems to have been assembled from discarded "
         "first drafts.", "negative"),
        ("I laughed harder at this dry little mockumentary than at anything else I have seen this year.", "positive"),
        ("Some viewers may enjoy the nostalgic soundtrack; everyone else will be left staring at the"
         " ceiling.", "negative"),
        ("A rare sequel that deepens its characters instead of merely repeating the original's tricks.", "positive"),
        ("It is competently shot, I suppose, though I cannot recall a single scene from it a day later.", "negative"),
        ("A few scenes wobble, but the war epic's battle sequences are staggering and its final act "
         "is devastatingly powerful.", "positive"),
        ("The animation is bright and busy, but the story is so thin that even the young children "
         "around me grew restless.", "negative"),
        ("Its western landscapes are breathtaking, and the taciturn hero slowly becomes someone you "
         "would follow anywhere.", "positive"),
        ("A quiet, patient drama that trusts its audience; by the final shot I realized I had been "
         "holding my breath.", "positive"),
        ("The lead tries hard, bless him, but no performance could rescue dialogue this wooden.", "negative"),
        ("Modest in budget but enormous in ambition, the sci-fi drama delivers ideas and feeling in "
         "equal measure.", "positive"),
        ("The heist plot is nothing new, but the crackling banter between the two leads makes every "
         "scene feel fresh and alive.", "positive"),
        ("The jokes land about as often as the plot makes sense, which is to say almost never.", "negative"),
        ("The comedy's best gag is in the trailer, and it is funnier there.", "negative"),
        ("The special effects are impressive for about ten minutes, and then the film has nothing "
         "else to offer.", "negative"),
        ("The director clearly loves the genre; it is a shame he forgot to give the audience a "
         "reason to care.", "negative"),
        ("The spy caper moves with such confidence and wit that its implausibilities hardly matter.", "positive"),
        ("Despite a clumsy opening ten minutes, the romance blossoms into something genuinely moving"
         " and beautifully acted.", "positive"),
        ("A children's adventure that adults will enjoy just as much, packed with heart and "
         "inventive set pieces.", "positive"),
        ("The editing is so choppy that the action scenes become an incomprehensible blur of elbows "
         "and sparks.", "negative"),
        ("The romantic leads share all the chemistry of two strangers waiting for the same bus.", "negative"),
        ("The animation is gorgeous, and the script finds real emotion in a story about a lonely "
         "lighthouse robot.", "positive"),
        ("Funny, tender, and unexpectedly wise, this small-town comedy earns every one of its tears.", "positive"),
        ("The score swells at just the right moments, and the chemistry between the estranged "
         "sisters feels utterly lived-in.", "positive"),
        ("The musical numbers are catchy, the choreography is dazzling, and I hummed the songs all "
         "the way home.", "positive"),
        ("The villain is more memorable than the hero, and even he is a patchwork of tired cliches.", "negative"),
        ("The lead actress carries the whole film on her shoulders and makes it look effortless.", "positive"),
        ("Bloated, self-important, and oddly lifeless, the fantasy epic drags its feet toward an "
         "ending that resolves nothing.", "negative"),
        ("Two hours felt like four; the thriller's twists were visible from the opening credits.", "negative"),
        ("An intriguing premise about time travel is squandered on tedious subplots and a lazy, "
         "contradictory finale.", "negative"),
        ("Even the minor characters get sharp, memorable lines in this clever courtroom satire.", "positive"),
        ("It is a slow burn, but the payoff is so satisfying that my patience felt rewarded tenfold.", "positive"),
        ("A few striking images cannot make up for characters who exist only to explain the plot to "
         "each other.", "negative"),
        ("What begins as a promising satire curdles into a smug, preachy lecture by the halfway mark.", "negative"),
        ("By the third identical car chase, I had stopped caring who survived.", "negative"),
        ("This horror film mistakes loud noises for scares and confusion for mystery.", "negative"),
        ("Fans of the original will find little here beyond hollow callbacks and a cynical cash grab.", "negative"),
        ("I admired the ambition, but the muddled storytelling and flat acting left me eyeing the "
         "exit signs.", "negative"),
    ],
    "review-stars": [
        ("Comfortable bed and friendly staff, but the breakfast was disappointing and parking was "
         "expensive.", "average"),
        ("The pasta was bland and overpriced, though the bread basket was decent.", "poor"),
        ("Tasty tacos and friendly staff. A little pricey, but I would happily come back.", "good"),
        ("Pleasant stay near the beach, with attentive service. The bathroom could use some updating.", "good"),
        ("The jacket fell apart at the seams the first time I wore it. Absolute garbage.", "terrible"),
        ("Waited ninety minutes for takeout that arrived wrong and inedible. Complete waste of money.", "terrible"),
        ("Solid keyboard with satisfying keys; the software is a bit clunky, but it works.", "good"),
        ("The spa resort exceeded every expectation. Pure bliss, impeccable staff, and the food was "
         "out of this world.", "excellent"),
        ("These running shoes are light and supportive. They took a few days to break in.", "good"),
        ("These headphones stopped charging after a week and the company refuses to honor the warranty.", "terrible"),
        ("The blanket is soft and warm, and it washes well. The color is slightly darker than pictured.", "good"),
        ("Best hotel stay of my life. Spotless rooms, stunning views, and service that anticipated "
         "our every need.", "excellent"),
        ("The vacuum is useless, loud, and barely picks up crumbs. Returning it immediately; avoid "
         "at all costs.", "terrible"),
        ("Some dishes were tasty and others were bland; a mixed experience overall.", "average"),
        ("These noise-cancelling headphones are phenomenal. Crystal-clear sound, and the battery "
         "seems to last forever.", "excellent"),
        ("Incredible wood-fired pizza, the best I have had outside Naples. Worth every penny and "
         "then some.", "excellent"),
        ("I love this backpack. Tough, smartly designed, and it still looks brand new after a year "
         "of daily travel.", "excellent"),
        ("The hotel was clean and fine for one night, though the decor is dated and the walls are thin.", "average"),
        ("This stand mixer is a dream. Powerful, quiet, beautifully built. I cannot recommend it enough!", "excellent"),
        ("Very comfortable hotel with a great view; my only complaint is the slow elevator.", "good"),
        ("The coffee maker brews a rich cup and is easy to clean. I wish the carafe held a bit more.", "good"),
        ("The kettle works, but the lid is flimsy and it already leaks a little after a month.", "poor"),
        ("Flawless from check-in to checkout. We are already planning our next visit!", "excellent"),
        ("Food was okay, service was okay. Not bad, not memorable either.", "average"),
        ("Decent burger, nothing special. Fries were a bit soggy, but the price was fair.", "average"),
        ("The shoes look nice but pinch badly, and the sole started peeling after two weeks.", "poor"),
        ("Clean, quiet room and helpful staff. Breakfast options were limited but tasty.", "good"),
        ("Service was slow and my steak came out overcooked. Dessert was fine, but I would not return.", "poor"),
        ("Breakfast buffet was sparse and lukewarm, and the pool was closed without notice. "
         "Disappointing stay overall.", "poor"),
        ("Absolutely amazing meal from start to finish! Every dish was perfect and the staff made us"
         " feel like family.", "excellent"),
        ("Stained sheets, a broken lock, and cockroaches in the bathroom. I checked out after one night.", "terrible"),
        ("Worst pizza I have ever had: burnt crust, raw dough in the middle, and a manager who blamed us.", "terrible"),
        ("Outstanding bakery! The croissants are buttery perfection and the owners are wonderful people.", "excellent"),
        ("A middle-of-the-road phone charger: it charges slowly, but it has not failed me yet.", "average"),
        ("Cheap-feeling phone case that scratched within days. It does protect the phone, barely.", "poor"),
        ("Cold food, rude waiter, and we found a hair in the soup. Never again.", "terrible"),
        ("The cafe is fine for a quick coffee. Nothing to write home about, nothing to complain about.", "average"),
        ("Mostly forgettable sushi with rubbery fish. The miso soup was the only thing I enjoyed.", "poor"),
        ("Our hotel room was cramped and noisy; the staff were polite but could not fix the heating.", "poor"),
        ("I got food poisoning after eating here and the owner laughed when I called.", "terrible"),
        ("The backpack does the job. Some stitching looks loose, but it has held up so far.", "average"),
        ("Lovely dinner overall. The lamb was tender and flavorful, though dessert was just okay.", "good"),
        ("The toaster browns unevenly, but it is cheap and works well enough for basic breakfasts.", "average"),
        ("This mouse is serviceable for everyday use, though the scroll wheel feels a little cheap.", "average"),
        ("Location was convenient, but the room was dusty and the wifi barely worked. I would look "
         "elsewhere next time.", "poor"),
        ("Really enjoyed the ramen here, with rich broth and springy noodles. The wait for a table "
         "was long, though.", "good"),
        ("The blender broke on its second use and customer service hung up on me twice.", "terrible"),
        ("The room smelled of smoke and mold, and the front desk just shrugged when we complained.", "terrible"),
        ("The lamp flickers occasionally and the assembly instructions were confusing. Not worth the price.", "poor"),
        ("Wow. Perfectly cooked steak, inventive cocktails, and flawless service. Easily my new "
         "favorite restaurant.", "excellent"),
    ],
    "paraphrase": [
        ("Sentence 1: The CEO said the company would move its headquarters from Dallas to Atlanta. "
         "Sentence 2: The company will move its headquarters from Atlanta to Dallas, the CEO said.", "no"),
        ("Sentence 1: The ferry service between the two islands will resume in early June after "
         "repairs. Sentence 2: Ferry service between the two islands will be suspended in early June"
         " for repairs.", "no"),
        ("Sentence 1: The train to the airport was delayed by twenty minutes because of a signal "
         "problem. Sentence 2: A signal fault held up the airport train for twenty minutes.", "yes"),
        ("Sentence 1: The coach praised her team for staying calm during the final minutes of the "
         "match. Sentence 2: Her team kept its composure in the closing minutes of the game, and the"
         " coach commended them for it.", "yes"),
        ("Sentence 1: The senator announced she would not seek reelection when her term ends next "
         "year. Sentence 2: The senator said she will not run again once her term expires next year.", "yes"),
        ("Sentence 1: Three of the five board members voted in favor of the new parking rules. "
         "Sentence 2: Only two of the five board members supported the new parking rules in the "
         "vote.", "no"),
        ("Sentence 1: About 300 residents were evacuated as the wildfire spread toward the valley "
         "overnight. Sentence 2: Roughly 300 people had to leave their homes as the fire moved "
         "toward the valley during the night.", "yes"),
        ("Sentence 1: The factory will hire 150 new workers once the expansion is completed in "
         "March. Sentence 2: After the expansion wraps up in March, the factory plans to add 150 "
         "employees.", "yes"),
        ("Sentence 1: Police said the driver was not wearing a seatbelt at the time of the crash. "
         "Sentence 2: According to police, the driver had a seatbelt on when the crash happened.", "no"),
        ("Sentence 1: The new law requires cyclists under 16 to wear helmets on public roads. "
         "Sentence 2: Under the new law, all cyclists on public roads must wear helmets, regardless "
         "of age.", "no"),
        ("Sentence 1: Last year the town planted about 500 trees along its main roads. Sentence 2: "
         "Next year the town plans to plant about 500 trees along its main roads.", "no"),
        ("Sentence 1: Unemployment in the region dropped to 4 percent in March, its lowest level in "
         "a decade. Sentence 2: Unemployment in the region climbed to 4 percent in March, its "
         "highest level in a decade.", "no"),
        ("Sentence 1: Anna lent her car to her brother while he was looking for a new job. Sentence "
         "2: Anna's brother lent her his car while she was looking for a new job.", "no"),
        ("Sentence 1: My neighbor has been growing tomatoes on his balcony for three summers now. "
         "Sentence 2: For the past three summers, my neighbor has grown tomatoes on his balcony.", "yes"),
        ("Sentence 1: The city council voted on Tuesday to extend library hours through the summer "
         "months. Sentence 2: On Tuesday, council members approved longer library hours for the "
         "summer season.", "yes"),
        ("Sentence 1: The two companies agreed to merge in a deal valued at 3 billion dollars. "
         "Sentence 2: A 3 billion dollar agreement will combine the two companies into one.", "yes"),
        ("Sentence 1: The hospital opened a new children's ward with forty beds last week. Sentence "
         "2: Last week a forty-bed ward for children opened at the hospital.", "yes"),
        ("Sentence 1: The bakery on Elm Street closes an hour early on Fridays. Sentence 2: On "
         "Fridays, the Elm Street bakery shuts its doors one hour earlier than usual.", "yes"),
        ("Sentence 1: The study found that children who read daily scored higher on vocabulary "
         "tests. Sentence 2: The study found no link between daily reading and children's scores on "
         "vocabulary tests.", "no"),
        ("Sentence 1: The company reported that its annual revenue grew by 8 percent last year. "
         "Sentence 2: Annual revenue at the company rose 18 percent last year, according to its "
         "report.", "no"),
        ("Sentence 1: The author's second novel sold more copies in its first month than her debut "
         "did in a year. Sentence 2: In its first month, the author's second novel outsold what her "
         "first book sold in an entire year.", "yes"),
        ("Sentence 1: The concert hall in Vienna will host the orchestra's final performance of the "
         "season. Sentence 2: The orchestra will give its first performance of the season at the "
         "concert hall in Vienna.", "no"),
        ("Sentence 1: The museum in Boston acquired the painting for 2 million dollars at auction. "
         "Sentence 2: The painting was bought at auction for 2 million dollars by a museum in "
         "Chicago.", "no"),
        ("Sentence 1: The bakery sold out of bread by noon on the first day after reopening. "
         "Sentence 2: On its first day after reopening, the bakery still had plenty of bread left at"
         " noon.", "no"),
        ("Sentence 1: The government plans to ban single-use plastic bags in supermarkets starting "
         "next January. Sentence 2: Under a government plan, supermarkets will no longer be allowed "
         "to hand out single-use plastic bags from next January.", "yes"),
        ("Sentence 1: The company said its quarterly profit rose by 12 percent compared with last "
         "year. Sentence 2: Quarterly profit at the company climbed 12 percent from a year earlier, "
         "it said.", "yes"),
        ("Sentence 1: The factory will cut 200 jobs when production moves overseas next year. "
         "Sentence 2: Next year, the factory will add 200 jobs as production returns from overseas.", "no"),
        ("Sentence 1: Tom forgot his umbrella at the office and got soaked walking home. Sentence 2:"
         " Having left his umbrella at work, Tom got drenched on his walk home.", "yes"),
        ("Sentence 1: The clinic is closed on weekends but open late on Wednesdays. Sentence 2: The "
         "clinic is open on weekends but closes early on Wednesdays.", "no"),
        ("Sentence 1: Shares of the airline fell 5 percent after it cut its forecast for annual "
         "revenue. Sentence 2: The airline's stock dropped 5 percent when the carrier lowered its "
         "yearly revenue outlook.", "yes"),
        ("Sentence 1: Our landlord agreed to fix the heating but refused to repaint the kitchen. "
         "Sentence 2: Our landlord agreed to repaint the kitchen but refused to fix the heating.", "no"),
        ("Sentence 1: The goalkeeper was injured during practice and will miss Saturday's game. "
         "Sentence 2: The goalkeeper was injured during practice but is expected to play in "
         "Saturday's game.", "no"),
        ("Sentence 1: The store will stay open until midnight during the week before the holiday. "
         "Sentence 2: During the week after the holiday, the store will stay open until midnight.", "no"),
        ("Sentence 1: The new bridge will cost about 40 million dollars and open in 2026. Sentence "
         "2: Opening in 2026, the new bridge carries a price tag of roughly 40 million dollars.", "yes"),
        ("Sentence 1: Heavy rain forced organizers to postpone the outdoor concert until next "
         "Saturday. Sentence 2: The open-air concert was pushed back to next Saturday because of "
         "heavy rain.", "yes"),
        ("Sentence 1: Researchers found that the drug reduced symptoms in about two thirds of "
         "patients. Sentence 2: According to the researchers, roughly two out of three patients saw "
         "their symptoms ease with the drug.", "yes"),
        ("Sentence 1: The university raised its enrollment target after applications jumped by a "
         "third this year. Sentence 2: The university lowered its enrollment target after "
         "applications fell by a third this year.", "no"),
        ("Sentence 1: The prime minister met with farmers to discuss the drought before the budget "
         "vote. Sentence 2: The prime minister met with farmers to discuss the drought after the "
         "budget vote had passed.", "no"),
        ("Sentence 1: Most of the passengers on the delayed flight were given hotel rooms for the "
         "night. Sentence 2: Only a few passengers on the delayed flight were given hotel rooms for "
         "the night.", "no"),
        ("Sentence 1: Jenna moved to Denver last spring to start a job as a nurse. Sentence 2: Last "
         "spring Jenna relocated to Denver, where she began working as a nurse.", "yes"),
        ("Sentence 1: The school board decided not to raise tuition fees for the coming academic "
         "year. Sentence 2: Tuition fees will stay the same next academic year after the school "
         "board chose against an increase.", "yes"),
        ("Sentence 1: Lisa beat her sister in the chess final after a three-hour game. Sentence 2: "
         "After a three-hour game, Lisa lost the chess final to her sister.", "no"),
        ("Sentence 1: Police arrested two men after a break-in at a downtown jewelry store early "
         "Sunday. Sentence 2: Two men were taken into custody following a burglary at a jewelry shop"
         " downtown early on Sunday.", "yes"),
        ("Sentence 1: Maria finished the marathon in just under four hours, beating her previous "
         "best. Sentence 2: Beating her old personal record, Maria completed the marathon in "
         "slightly less than four hours.", "yes"),
        ("Sentence 1: The band canceled its European tour because the lead singer fell ill. Sentence"
         " 2: The lead singer fell ill, but the band went ahead with its European tour anyway.", "no"),
        ("Sentence 1: The mayor will visit the flooded neighborhoods on Monday morning. Sentence 2: "
         "The flooded neighborhoods will be visited by the governor on Monday morning.", "no"),
        ("Sentence 1: The museum will offer free admission to all visitors on the first Sunday of "
         "every month. Sentence 2: On the first Sunday of each month, everyone can enter the museum "
         "without paying.", "yes"),
        ("Sentence 1: Ticket prices for the city's buses will rise by 25 cents beginning in April. "
         "Sentence 2: Beginning in April, riding a city bus will cost 25 cents more.", "yes"),
    ],
    "entailment": [
        ("Premise: Although he had studied French for years, Omar found that he could barely "
         "understand the fast speech in Paris. Hypothesis: Omar had studied French before.", "true"),
        ("Premise: Amy usually takes the bus, but today her friend gave her a ride to school because"
         " of the snow. Hypothesis: Amy took the bus to school today.", "false"),
        ("Premise: Our manager announced that the office will move to a new building in the spring. "
         "Hypothesis: The new building is closer to the city center.", "neither"),
        ("Premise: My grandmother, who turned ninety last month, still walks to the market every "
         "morning. Hypothesis: My grandmother is at least ninety years old.", "true"),
        ("Premise: Kevin failed his driving test twice before finally passing on his third attempt "
         "last month. Hypothesis: Kevin passed his driving test on the first try.", "false"),
        ("Premise: Lucy found a wallet on the sidewalk outside the post office and picked it up. "
         "Hypothesis: Lucy returned the wallet to its owner.", "neither"),
        ("Premise: The bakery down the street started selling gluten-free bread last month. "
         "Hypothesis: The gluten-free bread sells better than the regular bread.", "neither"),
        ("Premise: When Priya got to the station, the last bus had already left, so she called her "
         "father to pick her up. Hypothesis: Priya missed the last bus.", "true"),
        ("Premise: Ben spent the whole afternoon painting the fence, and by dinner every board was a"
         " fresh shade of green. Hypothesis: The fence was painted green.", "true"),
        ("Premise: Hannah's brother is a doctor at the hospital across town, where he mostly works "
         "night shifts. Hypothesis: Hannah is also a doctor.", "neither"),
        ("Premise: Daniel is the youngest of four brothers and the only one who still lives with "
         "their parents. Hypothesis: Daniel is an only child.", "false"),
        ("Premise: Helen bought a new laptop on Saturday and spent the evening setting it up at her "
         "kitchen table. Hypothesis: Helen's new laptop was expensive.", "neither"),
        ("Premise: Martin took his car to the mechanic because it was making a strange noise "
         "whenever he braked. Hypothesis: The mechanic fixed the car the same day.", "neither"),
        ("Premise: The team lost all six of its away games this season but won all six of its home "
         "matches. Hypothesis: The team won six games this season.", "true"),
        ("Premise: The library closed permanently last spring after the town council stopped funding"
         " it. Hypothesis: The library is still open.", "false"),
        ("Premise: A new coffee shop opened on the corner, and there was a long line outside on its "
         "first morning. Hypothesis: The coffee at the new shop is good.", "neither"),
        ("Premise: The train from the city was crowded, so Nora stood for most of the journey home. "
         "Hypothesis: Nora was tired when she got home.", "neither"),
        ("Premise: Leo is allergic to peanuts, so his parents check every food label carefully "
         "before buying anything. Hypothesis: Leo can safely eat peanuts.", "false"),
        ("Premise: The twins started at a new school this fall after the family moved across the "
         "state. Hypothesis: The twins like their new school.", "neither"),
        ("Premise: Nadia baked two dozen cookies for the school fair and sold every one of them "
         "within an hour. Hypothesis: Nadia sold twenty-four cookies.", "true"),
        ("Premise: Every seat in the lecture hall was taken, so latecomers had to stand along the "
         "back wall. Hypothesis: Some people stood during the lecture.", "true"),
        ("Premise: Ethan has been learning the guitar for six months and practices for about an hour"
         " most evenings. Hypothesis: Ethan plans to join a band.", "neither"),
        ("Premise: Julia has been a vegetarian since she was fifteen and has not eaten meat in over "
         "twenty years. Hypothesis: Julia ate a steak last week.", "false"),
        ("Premise: The kitten was found shivering under a parked car, and the children brought it "
         "inside and wrapped it in a towel. Hypothesis: The children brought the kitten indoors.", "true"),
        ("Premise: Mark and his wife have no children, but they often babysit their nieces on "
         "weekends. Hypothesis: Mark has two sons.", "false"),
        ("Premise: The restaurant was completely full on Friday night, and several couples were "
         "turned away at the door. Hypothesis: Some people could not get a table at the restaurant "
         "on Friday.", "true"),
        ("Premise: Grace locked the front door, checked the windows, and then drove to the airport "
         "for her flight to Lisbon. Hypothesis: Grace went to the airport.", "true"),
        ("Premise: The soup was so salty that nobody at the table could finish even half a bowl. "
         "Hypothesis: Everyone finished their soup.", "false"),
        ("Premise: The hotel pool was closed for repairs during our entire stay, so the kids swam at"
         " the beach instead. Hypothesis: The kids swam in the hotel pool during our stay.", "false"),
        ("Premise: Emma sold her old bicycle to a neighbor for forty dollars and used the money to "
         "buy a new helmet. Hypothesis: Emma no longer owns her old bicycle.", "true"),
        ("Premise: The old factory on the river was torn down in 2015, and a park now stands where "
         "it used to be. Hypothesis: The factory is still standing by the river.", "false"),
        ("Premise: The hikers reached the summit just before sunset, took a few photos, and then "
         "started the long walk down in the dark. Hypothesis: The hikers made it to the top.", "true"),
        ("Premise: The package was supposed to arrive on Monday, but it did not show up until Friday"
         " afternoon. Hypothesis: The package arrived on Monday.", "false"),
        ("Premise: Paul went to the hardware store on Sunday to buy paint for the bedroom. "
         "Hypothesis: Paul painted the bedroom blue.", "neither"),
        ("Premise: The school canceled classes on Monday after a pipe burst and flooded the main "
         "hallway. Hypothesis: The school will reopen on Tuesday.", "neither"),
        ("Premise: The concert sold very few tickets, and the hall was nearly empty when the band "
         "came on stage. Hypothesis: The concert was sold out.", "false"),
        ("Premise: Despite the forecast, it did not rain at all during the outdoor wedding, and "
         "guests stayed outside until midnight. Hypothesis: The wedding was interrupted by rain.", "false"),
        ("Premise: The printer in the office has been broken since Monday, so everyone has been "
         "emailing documents instead. Hypothesis: The office printer is working fine.", "false"),
        ("Premise: Victor applied for a job at the bank downtown and had his interview on Thursday "
         "morning. Hypothesis: Victor got the job at the bank.", "neither"),
        ("Premise: The shop only accepts cash, and the owner has refused for years to install a card"
         " reader. Hypothesis: The shop accepts credit cards.", "false"),
        ("Premise: Sam forgot to set his alarm, woke up at nine, and arrived at work an hour after "
         "his shift started. Hypothesis: Sam was late for work.", "true"),
        ("Premise: Sofia's parents are visiting from Brazil next week, and she has been cleaning her"
         " apartment all weekend. Hypothesis: Sofia's parents will stay in her apartment.", "neither"),
        ("Premise: Carlos has lived in the same apartment for twelve years and says he has never "
         "once been late with the rent. Hypothesis: Carlos has lived in his apartment for over a "
         "decade.", "true"),
        ("Premise: Clara ordered a pizza for dinner and watched a movie with her roommate. "
         "Hypothesis: Clara's roommate paid for the pizza.", "neither"),
        ("Premise: After the storm knocked out the power, the family ate dinner by candlelight and "
         "played cards until bedtime. Hypothesis: The family lost electricity because of the storm.", "true"),
        ("Premise: The neighbors were having a loud party on Friday night, and music could be heard "
         "until two in the morning. Hypothesis: Someone called the police about the party.", "neither"),
        ("Premise: The meeting was moved from Tuesday to Thursday because two of the managers were "
         "traveling early in the week. Hypothesis: The meeting was rescheduled.", "true"),
        ("Premise: Rosa has never left her home country, though she dreams of visiting Japan "
         "someday. Hypothesis: Rosa has been to Japan.", "false"),
    ],
    "fact-check": [
        ("Rice is harvested by picking it from the branches of tall trees.", "false"),
        ("Sound travels faster than light through the air.", "false"),
        ("The Titanic sank after striking a coral reef off the coast of Florida.", "false"),
        ("A tennis match is won by the first player to score ten goals.", "false"),
        ("Tokyo is the capital city of Japan.", "true"),
        ("A metal spoon left in hot soup becomes warm to the touch.", "true"),
        ("Most owls are active at night and hunt small animals.", "true"),
        ("An iron bar heated in a fire becomes light enough to float in the air.", "false"),
        ("Sound cannot travel through the vacuum of outer space.", "true"),
        ("Guacamole is made mainly from mashed avocado.", "true"),
        ("Whales are mammals and breathe air using lungs.", "true"),
        ("Bats are a type of bird because they have wings and can fly.", "false"),
        ("The Nile flows northward and empties into the Mediterranean Sea.", "true"),
        ("The Apollo 11 mission landed astronauts on the Moon in 1969.", "true"),
        ("Honey bees collect nectar from flowers to make honey.", "true"),
        ("In baseball, each team gets only one out per half-inning.", "false"),
        ("The Amazon River flows across the middle of Australia.", "false"),
        ("A rainbow can appear when sunlight passes through raindrops.", "true"),
        ("The ancient pyramids of Giza were built in Mexico.", "false"),
        ("Cheese is a food that is made from milk.", "true"),
        ("The Sahara Desert is located in northern Africa.", "true"),
        ("Mount Everest is part of the Himalaya mountain range.", "true"),
        ("Cows lay their eggs in nests on the ground.", "false"),
        ("Elephants are the smallest mammals living in Africa.", "false"),
        ("Butter is made by pressing olives until oil comes out.", "false"),
        ("Camels can go for long periods in the desert without drinking water.", "true"),
        ("At sea level, pure water freezes into ice at 100 degrees Celsius.", "false"),
        ("A soccer team starts a match with eleven players on the field.", "true"),
        ("The Moon produces its own light in the same way the Sun does.", "false"),
        ("Humans breathe in carbon dioxide and breathe out oxygen.", "false"),
        ("The Eiffel Tower stands in the center of London.", "false"),
        ("A marathon is a running race of a little over 42 kilometers.", "true"),
        ("Paris is the capital city of Italy.", "false"),
        ("Christopher Columbus first sailed to the Americas in the year 1800.", "false"),
        ("Spiders are insects that walk on six legs.", "false"),
        ("Antarctica is mostly covered in thick tropical rainforest.", "false"),
        ("In golf, players try to finish each hole using as many strokes as possible.", "false"),
        ("Water boils at a lower temperature on a high mountain than at sea level.", "true"),
        ("In basketball, a shot made from beyond the arc is worth three points.", "true"),
        ("Each player begins a game of chess with sixteen pieces.", "true"),
        ("Ice floats on liquid water because it is less dense.", "true"),
        ("Wild penguins live mainly in the Arctic near the North Pole.", "false"),
        ("The Pacific Ocean is the largest ocean on Earth.", "true"),
        ("Sand dissolves completely in water, just like sugar does.", "false"),
        ("The Great Wall of China was built over many centuries by several dynasties.", "true"),
        ("Penguins are birds that cannot fly but are strong swimmers.", "true"),
        ("Spiders have eight legs, while insects such as ants have six.", "true"),
        ("Sharks are mammals that must surface regularly to breathe air.", "false"),
    ],
    "spam": [
        ("I found a coupon for 20 percent off at the hardware store, want to go paint shopping tomorrow?", "ham"),
        ("The landlord said rent goes up by 50 dollars next month, I think we should talk about it tonight.", "ham"),
        ("Last chance! Your free cruise for two expires tonight. Call now to book your cabin.", "spam"),
        ("Team lunch is on the company this Friday, reply with your sandwich choice by noon Wednesday.", "ham"),
        ("You have 1 unclaimed voucher worth 250. Claim it in the rewards center before it expires: "
         "rwds-center.example.biz", "spam"),
        ("FREE ringtones! Reply TONE to get 5 free tracks sent to your phone every week. Standard "
         "rates apply.", "spam"),
        ("Here is the link to the slides from today: docs.example.com/q3-review. Comments welcome "
         "before Monday.", "ham"),
        ("Your tax refund of 312.40 is ready. Submit your bank details through our secure form to receive it.", "spam"),
        ("Subject: Invoice overdue - Kindly review the attached document and remit payment today to "
         "avoid legal action.", "spam"),
        ("Boost your followers by 10000 overnight with our guaranteed growth service. DM us for packages.", "spam"),
        ("The plumber quoted 180 for the sink repair, does that sound reasonable to you?", "ham"),
        ("Hey dear, I saw your profile and would love to chat. Add me on my private app, link in bio.", "spam"),
        ("Congratulations, your number was drawn in our monthly prize draw! Text CLAIM to 80085 to "
         "receive your reward.", "spam"),
        ("Subject: Domain expiration notice - Your website domain will expire soon. Renew through "
         "our service at a discounted rate.", "spam"),
        ("Subject: Quick favor - Are you at your desk? I need you to buy four gift cards for a "
         "client, will reimburse later.", "spam"),
        ("Your order #48213 has shipped and should arrive Thursday. You can track it in the app "
         "under My Orders.", "ham"),
        ("Meet attractive singles in your area tonight, sign up free, no credit card needed.", "spam"),
        ("Lose 10 kg in 2 weeks with this one natural trick that doctors don't want you to know!", "spam"),
        ("The bakery has a buy one get one offer on croissants today, want me to grab some for breakfast?", "ham"),
        ("Your streaming subscription payment failed. Update your card within 24 hours or lose "
         "access: billing-update.example.com", "spam"),
        ("Subject: Updated contract - Hi Tom, HR has uploaded your new salary letter to the portal, "
         "please sign it by Friday.", "ham"),
        ("Did you win anything at the school raffle last night? I only got a keychain and a mug lol.", "ham"),
        ("Hi Mom, I dropped my phone and this is my new number. Can you send me money for a new one urgently?", "spam"),
        ("Subject: Expense reports due - Reminder that quarterly expenses go to finance by the 28th,"
         " with scanned receipts attached.", "ham"),
        ("Subject: Code review request - Hi Sam, could you look at my pull request for the login "
         "page before lunch?", "ham"),
        ("Congrats on the new job! We should celebrate, drinks are on me this weekend.", "ham"),
        ("Earn cash by reviewing products from home! No experience needed, start today and get paid weekly.", "spam"),
        ("Grandma wants everyone at her place Sunday at 1, bring a dessert if you can.", "ham"),
        ("Subject: Free parking this weekend - Facilities says the north garage is open at no cost "
         "for staff on Saturday and Sunday.", "ham"),
        ("Subject: Re: our conversation - As discussed, attached is the crypto investment plan with "
         "guaranteed 40 percent monthly returns.", "spam"),
        ("Reminder: your dentist appointment is Tuesday at 3:15 pm. Call the office if you need to reschedule.", "ham"),
        ("URGENT: your bank account has been suspended. Verify your details at secure-login-"
         "verify.example.net immediately.", "spam"),
        ("Flight lands at 6:40, terminal B. Could you text me when you are parked outside arrivals?", "ham"),
        ("Dear customer, we noticed unusual sign-in activity. Confirm your password here to keep "
         "your account safe.", "spam"),
        ("Happy birthday! I transferred 20 bucks for the concert tickets, see you at the gate at seven.", "ham"),
        ("Your library books are due back on the 12th. You can renew them online through your library account.", "ham"),
        ("Can you pick up milk and eggs on the way home? Also the car is nearly out of gas.", "ham"),
        ("Subject: Notes from Tuesday standup - Attached are the minutes, action items are "
         "highlighted in yellow.", "ham"),
        ("Thanks for lending me the tent! I will drop it back at your house on Wednesday evening.", "ham"),
        ("Hi, is this still your number? I have a great work-from-home opportunity paying 500 a day,"
         " reply YES.", "spam"),
        ("You are pre-approved for a low-interest loan of up to 25000 with no credit check. Apply today.", "spam"),
        ("Hey, I paid the electricity bill, your half is 43 dollars, send it whenever you get a chance.", "ham"),
        ("Subject: Invoice 2291 for March design work - Hi Priya, attached is the invoice, payment "
         "terms are 30 days as agreed.", "ham"),
        ("Exclusive offer just for you: 90 percent off designer watches, limited stock, order now "
         "before they are gone!", "spam"),
        ("Hello friend, I am a lawyer representing a late client who left 4.5 million dollars with "
         "no heir. Contact me privately.", "spam"),
        ("WINNER!! You have been selected for a 1000 dollar gift card. Click now to claim it before midnight.", "spam"),
        ("Subject: Your package could not be delivered - Please pay a 1.99 redelivery fee using the "
         "link below to reschedule.", "spam"),
        ("Running ten minutes late, traffic on the bridge is terrible. Please start the meeting without me.", "ham"),
    ],
    "formality": [
        ("finally dragged myself to the gym this morning and now my legs are totally dead lol", "casual"),
        ("lol did u even start the history essay yet? I literally haven't written a single word and "
         "it's due tmrw", "casual"),
        ("anyone know a decent laptop that won't cost a fortune? mine's basically dying and sounds "
         "like a jet engine", "casual"),
        ("yo did you catch the game last night?? that last-second shot was insane, I was screaming at my TV", "casual"),
        ("aunt Linda's coming over tonight so brace yourself for like a million questions about your"
         " love life", "casual"),
        ("Please be advised that the company email servers will undergo scheduled maintenance this "
         "Saturday between midnight and 4 a.m.", "formal"),
        ("I would be grateful if you could forward the signed contract to my office at your earliest"
         " convenience.", "formal"),
        ("thinking about getting that jacket we saw, but it's kinda pricey... should I just go for it?", "casual"),
        ("Should you have any further questions regarding your order, please do not hesitate to "
         "contact our customer service department.", "formal"),
        ("mom's making her famous lasagna sunday, you coming over or what? grandpa keeps asking "
         "about you lol", "casual"),
        ("Visitors are kindly asked to refrain from using mobile telephones within the intensive care unit.", "formal"),
        ("ok who ate my leftover pizza from the fridge, I was literally saving that for lunch smh", "casual"),
        ("Employees who experience symptoms of illness are requested to remain at home and inform "
         "their supervisor promptly.", "formal"),
        ("dude the flight got delayed AGAIN, we're just chilling at the gate eating overpriced pretzels", "casual"),
        ("bro just turn it off and on again, that's literally how I fix everything and it works like"
         " half the time", "casual"),
        ("just got the job!!! starting monday, can't believe they actually picked me haha", "casual"),
        ("my phone's been acting super weird since the update, keeps freezing every five seconds, "
         "it's driving me nuts", "casual"),
        ("Please accept my deepest condolences on the passing of your grandmother; she will be "
         "remembered with great affection.", "formal"),
        ("lol I tried skateboarding for the first time and ate it so hard, my elbow's all scraped up", "casual"),
        ("Parents and guardians are cordially invited to attend the annual academic awards ceremony "
         "in the main auditorium.", "formal"),
        ("Owing to adverse weather conditions, all ferry services to the northern islands have been "
         "suspended until further notice.", "formal"),
        ("Enclosed please find my curriculum vitae for your consideration regarding the position of "
         "senior financial analyst.", "formal"),
        ("Patients are reminded to bring a valid form of identification and their insurance card to "
         "every scheduled appointment.", "formal"),
        ("Passengers are advised that boarding for Flight 214 will commence at gate twelve in "
         "approximately fifteen minutes.", "formal"),
        ("I am writing to formally request a meeting to discuss the proposed revisions to the "
         "departmental budget.", "formal"),
        ("mall was a total zoo today, couldn't even find a parking spot so I just bailed and went home", "casual"),
        ("Dear Ms. Alvarez, we are pleased to confirm your reservation for a deluxe room from the "
         "fourth to the ninth of June.", "formal"),
        ("it's freezing out there, seriously don't even bother going out without your big coat", "casual"),
        ("Residents are hereby notified that the water supply to the building will be interrupted on"
         " Tuesday morning for essential repairs.", "formal"),
        ("meeting ran waaay long again, nobody even knew what we were supposed to be deciding, what a waste", "casual"),
        ("The faculty committee will review all submitted applications and notify candidates of its "
         "decision by the end of March.", "formal"),
        ("The tournament organisers wish to express their sincere gratitude to all volunteers for "
         "their invaluable contributions.", "formal"),
        ("Spectators are respectfully requested to remain seated during play and to refrain from "
         "flash photography.", "formal"),
        ("The restaurant management sincerely apologises for the inconvenience caused by the delay "
         "in your order this evening.", "formal"),
        ("We regret to inform you that the quarterly budget review has been postponed until further notice.", "formal"),
        ("my little bro just learned to ride his bike without training wheels and he won't shut up "
         "about it haha", "casual"),
        ("just grabbed these sneakers on sale for like half off, honestly the best deal ever, you're"
         " gonna be so jealous", "casual"),
        ("Customers wishing to return merchandise must present the original receipt within thirty "
         "days of purchase.", "formal"),
        ("caught some nasty cold from my roommate, can't stop sneezing, so I'm bailing on tonight sorry!!", "casual"),
        ("Attendees are cordially invited to a reception with light refreshments immediately "
         "following the keynote address.", "formal"),
        ("dentist said I gotta floss more lol, like yeah yeah I've heard that one a hundred times", "casual"),
        ("ugh my boss just dumped another huge project on me, gonna be stuck here till like 9 tonight", "casual"),
        ("Students are reminded that all coursework must be submitted through the official portal "
         "prior to the stated deadline.", "formal"),
        ("The athletic department is pleased to announce that registration for the spring tennis "
         "league is now open.", "formal"),
        ("The findings of this study suggest that further research is required to establish a causal"
         " relationship between the variables.", "formal"),
        ("Guests with dietary restrictions are kindly requested to notify the catering staff no "
         "later than Friday afternoon.", "formal"),
        ("ugh lost my sunglasses somewhere in the airport, whatever, I'll just grab some cheap ones "
         "when we land", "casual"),
        ("Users are strongly encouraged to update their passwords regularly in accordance with the "
         "organisation's security policy.", "formal"),
        ("Kindly ensure that your passport remains valid for at least six months beyond your "
         "intended date of departure.", "formal"),
        ("The family of Mr. Harold Jensen kindly requests the honour of your presence at his "
         "retirement celebration.", "formal"),
        ("omg that taco place on 5th is sooo good, we gotta go back there this weekend for real", "casual"),
        ("beach trip this summer?? I'm thinking we just pile into Jake's car and wing it, who's in", "casual"),
        ("landlord finally fixed the sink, only took him like three weeks lmao", "casual"),
        ("aced my chem final!!! can't believe it, gonna celebrate with a huge burger tonight, who's coming", "casual"),
        ("prof cancelled class today so we're all just hanging out in the library doing absolutely nothing", "casual"),
        ("gonna whip up some pancakes, want some? I make 'em with chocolate chips so don't even say no", "casual"),
        ("Thank you for contacting technical support; a representative will respond to your inquiry "
         "within two business days.", "formal"),
        ("we got destroyed in rec league soccer tonight, like 7-0, pretty sure our goalie was half "
         "asleep lol", "casual"),
        ("We appreciate your continued patronage and are delighted to extend to you an exclusive "
         "invitation to our seasonal preview.", "formal"),
        ("hey can u cover my shift saturday? got a thing with my cousin, I'll owe you big time", "casual"),
    ],
    "sarcasm": [
        ("Ugh, my coworker brought homemade cookies for everyone again, how utterly inconsiderate of"
         " her.", "sarcastic"),
        ("Great news, my grandmother's surgery went well and she is already home recovering.", "sincere"),
        ("Oh no, what a tragedy, the restaurant gave me a free dessert and now I am forced to eat it.", "sarcastic"),
        ("I burned the dinner because I forgot to set a timer, so we ordered takeout instead.", "sincere"),
        ("Sadly, the little bakery down the road closed for good, and I will really miss their rye bread.", "sincere"),
        ("The train was forty minutes late and packed, so I had to stand the whole way home.", "sincere"),
        ("The new coffee shop on Elm Street makes the best croissants I have had in years.", "sincere"),
        ("Lovely weather we're having, I only needed three layers and an umbrella to walk to the "
         "mailbox.", "sarcastic"),
        ("Wow, the printer jammed again right before my deadline, what a fantastic piece of engineering.", "sarcastic"),
        ("Congratulations on showing up an hour late to your own birthday party, a true punctuality "
         "legend.", "sarcastic"),
        ("Gee, thanks for spoiling the ending of the show, I really didn't want to be surprised anyway.", "sarcastic"),
        ("How terrible, my boss gave me Friday off with full pay, however will I cope?", "sarcastic"),
        ("Fantastic, the new update deleted all my saved settings, exactly what I always wanted.", "sarcastic"),
        ("Wow, a parking ticket on my birthday, the city really knows how to make a person feel special.", "sarcastic"),
        ("Oh great, you found my lost keys in the garden, thank you, I had been searching for hours.", "sincere"),
        ("That movie was a waste of money, with a confusing plot and wooden acting from start to finish.", "sincere"),
        ("I'm thrilled my flight was overbooked, sleeping on the airport floor was just what I needed.", "sarcastic"),
        ("The teacher stayed after class to explain the math problem until I finally understood it.", "sincere"),
        ("Oh, brilliant, the self-checkout machine found an unexpected item in the bagging area for "
         "the tenth time.", "sarcastic"),
        ("I just love how quiet the park is early in the morning, with only birds and a few joggers "
         "around.", "sincere"),
        ("Sure, I'd love to work another unpaid weekend, it's not like I have a family or anything.", "sarcastic"),
        ("I missed the bus this morning and had to walk to work in the cold rain.", "sincere"),
        ("How dreadful, the forecast for the long weekend is nothing but sunshine and warm breezes, "
         "whatever shall we do?", "sarcastic"),
        ("Honestly, the food at the reception was cold and bland, and the speeches went on far too long.", "sincere"),
        ("Thanks so much for watering my plants while I was away, they all look healthy and green.", "sincere"),
        ("I'm nervous about my job interview tomorrow, but I have prepared as thoroughly as I can.", "sincere"),
        ("My laptop crashed and I lost an entire afternoon of work because I had not saved the file.", "sincere"),
        ("The new phone's camera is excellent in low light, and the battery easily lasts two full days.", "sincere"),
        ("Oh wonderful, the hotel's promised ocean view turned out to be a parking lot with a puddle.", "sarcastic"),
        ("I just love sitting in traffic for two hours, it really is the highlight of my week.", "sarcastic"),
        ("My flight was cancelled, so I spent the night at the airport and missed my cousin's wedding.", "sincere"),
        ("This vacuum cleaner broke after two weeks, and customer service refused to replace it.", "sincere"),
        ("The volunteers at the shelter were patient and kind, and the dog we adopted is settling in well.", "sincere"),
        ("Our team finally won the championship after ten years of trying, and the whole town celebrated.", "sincere"),
        ("What a nightmare, the cake turned out so delicious that every single guest asked for seconds.", "sarcastic"),
        ("Nothing says relaxing vacation quite like a six-hour flight delay followed by lost luggage.", "sarcastic"),
        ("Wow, the kids cleaned the whole kitchen without being asked, and I could not be prouder of them.", "sincere"),
        ("The doctor explained my test results clearly and patiently, and I left feeling much less "
         "anxious.", "sincere"),
        ("I'm disappointed that the museum closed its science wing, because my kids loved visiting it.", "sincere"),
        ("I am tired of my landlord ignoring the broken heater while it snows outside.", "sincere"),
        ("Great job, team, we managed to lose all five games this season without scoring a single goal.", "sarcastic"),
        ("I really enjoyed the cooking class, and now I can finally make fresh pasta from scratch.", "sincere"),
        ("The Wi-Fi in this cafe is incredible, I can load a single webpage in only about five minutes.", "sarcastic"),
        ("Oh yes, another group project where I do all the work, I simply can't contain my excitement.", "sarcastic"),
        ("My phone battery died at forty percent again, truly the pinnacle of modern technology.", "sarcastic"),
        ("Oh perfect, it started pouring the exact minute I finished washing my car.", "sarcastic"),
        ("Oh the agony, I have to choose between two job offers that both pay more than my current one.", "sarcastic"),
        ("My sister helped me move apartments all weekend, and I am really grateful to her.", "sincere"),
        ("What a beautiful sunset tonight, the whole sky turned orange and pink over the lake.", "sincere"),
        ("The hotel room was clean, quiet and comfortable, and the staff were genuinely friendly.", "sincere"),
        ("Clearly the best decision of my life was buying shoes that give me blisters after ten steps.", "sarcastic"),
        ("Oh sure, leaving the milk out all night was a genius move, the kitchen smells amazing now.", "sarcastic"),
        ("The concert last night was wonderful, and the band played every song I hoped to hear.", "sincere"),
        ("My neighbor shovelled the snow from my driveway this morning, which was a really kind surprise.", "sincere"),
        ("What a brilliant idea to schedule the fire drill right in the middle of the final exam.", "sarcastic"),
        ("Thanks so much for eating my lunch from the office fridge, I wasn't hungry anyway.", "sarcastic"),
        ("This novel is slow at the start, but the last hundred pages are absolutely gripping.", "sincere"),
        ("What a shame, the dentist says I have no cavities and won't need to come back for a whole "
         "year.", "sarcastic"),
        ("Yeah, because waiting on hold for ninety minutes is my favorite way to spend a Saturday.", "sarcastic"),
        ("This expensive chef's knife can barely cut through warm butter, what outstanding "
         "craftsmanship.", "sarcastic"),
    ],
    "subjectivity": [
        ("The Berlin Wall fell in November 1989, and Germany was reunified the following year.", "fact"),
        ("The Beatles were the greatest band in the history of popular music.", "opinion"),
        ("The first iPhone was announced by Apple in January 2007.", "fact"),
        ("The World Wide Web was invented by Tim Berners-Lee while he was working at CERN.", "fact"),
        ("Penguins are the most adorable birds in the whole world.", "opinion"),
        ("Bamboo is a type of grass, and some species can grow nearly a metre in a single day.", "fact"),
        ("Autumn is the loveliest season of the year, with its golden leaves and crisp mornings.", "opinion"),
        ("A long walk in the mountains is the best cure for a stressful week.", "opinion"),
        ("Tennis players today are more impressive athletes than those of any earlier generation.", "opinion"),
        ("Sushi rice is usually seasoned with a mixture of vinegar, sugar and salt.", "fact"),
        ("The Apollo 11 mission landed the first humans on the Moon in July 1969.", "fact"),
        ("Homemade bread tastes far better than anything you can buy in a supermarket.", "opinion"),
        ("Psycho is Hitchcock's finest film and still the scariest thriller ever made.", "opinion"),
        ("Venice is built on a group of small islands in a lagoon in northeastern Italy.", "fact"),
        ("Black-and-white films have a beauty that colour cinema has never quite matched.", "opinion"),
        ("Public money would be better spent on exploring the oceans than on sending people to Mars.", "opinion"),
        ("Most modern superhero films are repetitive and rely too heavily on special effects.", "opinion"),
        ("In tennis, a score of zero points in a game is called love.", "fact"),
        ("A standard modern piano has 88 keys, of which 52 are white and 36 are black.", "fact"),
        ("Water boils at 100 degrees Celsius at sea level under standard atmospheric pressure.", "fact"),
        ("Astronomy is by far the most fascinating branch of science for anyone curious about the "
         "universe.", "opinion"),
        ("The Summer Olympic Games are normally held once every four years.", "fact"),
        ("Marathon running is the most rewarding hobby a person can take up.", "opinion"),
        ("The Amazon rainforest spreads across several countries, with the largest portion lying in Brazil.", "fact"),
        ("Alfred Hitchcock directed the thriller Psycho, which was released in 1960.", "fact"),
        ("Sushi is overpriced for what is essentially just rice and raw fish.", "opinion"),
        ("New York is far too loud and crowded to be a pleasant place to live.", "opinion"),
        ("Tokyo has the best public transport system of any city I have ever visited.", "opinion"),
        ("Tokyo is the capital of Japan and one of the most populous metropolitan areas in the world.", "fact"),
        ("The Academy Awards, often called the Oscars, are presented each year in Los Angeles.", "fact"),
        ("The Beatles were a rock band formed in Liverpool, England, in 1960.", "fact"),
        ("Reading on paper is far more enjoyable than reading the same book on an e-reader.", "opinion"),
        ("The human heart has four chambers: two atria and two ventricles.", "fact"),
        ("Diamond and graphite are both made entirely of carbon atoms arranged in different structures.", "fact"),
        ("Guacamole is a dip made mainly from mashed avocado, and it originated in Mexico.", "fact"),
        ("Smartphones have made people less patient and worse at holding real conversations.", "opinion"),
        ("Football is the most exciting sport to watch because anything can happen until the final "
         "whistle.", "opinion"),
        ("The first Star Wars film was released in cinemas in 1977.", "fact"),
        ("Lisbon is the most charming capital in Europe, and every traveller should spend a week there.", "opinion"),
        ("Saffron comes from the dried stigmas of a crocus flower and is harvested by hand.", "fact"),
        ("Golf is too slow and dull to be worth watching on television.", "opinion"),
        ("A standard marathon race covers a distance of 42.195 kilometres.", "fact"),
        ("Small coastal towns make much more relaxing holiday destinations than big cities do.", "opinion"),
        ("Canberra, not Sydney, is the capital city of Australia.", "fact"),
        ("Visiting ancient ruins is a far more meaningful experience than reading about them in books.", "opinion"),
        ("A regulation basketball hoop is mounted ten feet above the floor.", "fact"),
        ("Pineapple has no place on a pizza, and adding it ruins the whole dish.", "opinion"),
        ("The original Star Wars trilogy is far better than any of the sequels that followed it.", "opinion"),
        ("Jazz is far more interesting to listen to than most of today's chart-topping pop songs.", "opinion"),
        ("The Great Pyramid of Giza was built for the Egyptian pharaoh Khufu.", "fact"),
        ("Every child should learn to write computer code before leaving primary school.", "opinion"),
        ("Light from the Sun takes roughly eight minutes to reach the Earth.", "fact"),
        ("A byte is made up of eight bits in almost all modern computers.", "fact"),
        ("Wild penguins live almost entirely in the Southern Hemisphere.", "fact"),
        ("History is the most important subject taught in schools because it helps us understand the"
         " present.", "opinion"),
        ("Ludwig van Beethoven continued to compose music after he had become almost completely deaf.", "fact"),
        ("The Renaissance was the most inspiring period in all of human history.", "opinion"),
        ("Chemistry lessons at school are boring unless the teacher does plenty of exciting experiments.", "opinion"),
        ("The blue whale is the largest animal known to have ever lived on Earth.", "fact"),
        ("Dark chocolate is the most delicious dessert ingredient, and milk chocolate is overrated.", "opinion"),
    ],
    "product-category": [
        ("Our spice rack arrived with two broken jars and the labels were printed crooked.", "kitchen"),
        ("Measuring cups with engraved markings that will not rub off in the dishwasher.", "kitchen"),
        ("Hardcover biography of a jazz pianist, illustrated with archival photographs and a full "
         "discography.", "books"),
        ("Garlic press is sturdy and easy to squeeze, but cleaning the little holes takes forever.", "kitchen"),
        ("A clear introduction to astronomy for teenagers, with diagrams on nearly every page.", "books"),
        ("Gave it to my dad for his birthday and he now streams podcasts on the smart speaker every "
         "morning.", "electronics"),
        ("Cheap charging cable frayed near the connector within a month. Spend a few more dollars "
         "elsewhere.", "electronics"),
        ("Read it aloud to my daughter every night; the rhyming verses and watercolor illustrations "
         "are delightful.", "books"),
        ("Elegant silk blouse for the office; it wrinkles easily, so keep a steamer handy.", "clothing"),
        ("The blade on this chef's knife dulled within weeks, even though I only used it on a wooden"
         " board.", "kitchen"),
        ("The noise-cancelling on these headphones is impressive on flights, but the ear cups get "
         "warm after an hour.", "electronics"),
        ("A solid pepper grinder with an adjustable coarseness dial; the ceramic mechanism has held "
         "up for a year.", "kitchen"),
        ("Comfortable running socks with cushioned heels. No blisters after a half marathon.", "clothing"),
        ("Stainless steel mixing bowls in three sizes, nested for storage, with non-slip silicone bases.", "kitchen"),
        ("The plot twist in the final chapter had me staring at the ceiling for an hour. Couldn't "
         "put it down.", "books"),
        ("A practical guide to personal finance, organized into short chapters with worksheets at "
         "the end of each.", "books"),
        ("Set of glass food storage containers with snap-lock lids; they are oven safe without the lids.", "kitchen"),
        ("Lightweight rain jacket with a packable hood, taped seams, and zippered side pockets.", "clothing"),
        ("The author spends three hundred pages repeating one idea that could fit in a magazine article.", "books"),
        ("Works as described. The tablet is fine for checking email and watching videos, nothing "
         "more, nothing less.", "electronics"),
        ("The dress looks exactly like the photo and the fabric drapes nicely, though the zipper "
         "sticks a bit.", "clothing"),
        ("Ordered a medium and it fits like a small; the sleeves barely reach my wrists.", "clothing"),
        ("My laptop finally has enough ports thanks to this hub: HDMI, ethernet, and three USB-C "
         "slots.", "electronics"),
        ("Bluetooth pairing is quick, though the bass on these earbuds sounds a little muddy at high"
         " volume.", "electronics"),
        ("Linen trousers, relaxed fit, elastic waist, in sand or olive. Machine washable on gentle.", "clothing"),
        ("Beautifully written memoir, but the middle section drags with too many family anecdotes.", "books"),
        ("Firmware update bricked my router overnight. Had to reset everything and reconfigure the "
         "Wi-Fi network.", "electronics"),
        ("Fine as a reference for grammar rules; the index is thorough but the font is tiny.", "books"),
        ("The hoodie is thick and cozy, but the drawstring came out on the second day.", "clothing"),
        ("The characters felt flat and the dialogue was clunky. I gave up halfway through the second part.", "books"),
        ("The remote lags by a second every time I change channels, which makes this television "
         "frustrating to use.", "electronics"),
        ("Shrank an entire size after one wash on cold. The cotton shirt is now unwearable.", "clothing"),
        ("Kids' pajama set in soft flannel with a dinosaur print. My son refuses to wear anything "
         "else to bed.", "clothing"),
        ("Mechanical keyboard with tactile switches and RGB backlighting; typing feels crisp, though"
         " it is fairly loud.", "electronics"),
        ("The battery lasts two full days and the screen stays bright even in direct sunlight. Very "
         "happy with it.", "electronics"),
        ("The can opener slipped off every can I tried, leaving jagged edges. Returned it.", "kitchen"),
        ("The cutting board warped after the first wash and now rocks on the counter whenever I chop"
         " onions.", "kitchen"),
        ("Decent webcam for video calls; the autofocus hunts sometimes but the microphone picks up "
         "voices clearly.", "electronics"),
        ("The cast iron pan arrived pre-seasoned and makes the best cornbread I have ever baked.", "kitchen"),
        ("Color faded badly after a few washes and the seams on the shoulders started unraveling.", "clothing"),
        ("The translation reads smoothly, and the footnotes explain the historical references "
         "without getting in the way.", "books"),
        ("This nonstick skillet releases eggs perfectly and cleans up with just a quick wipe.", "kitchen"),
        ("The thermal leggings kept me warm under my ski pants, and the waistband doesn't roll down.", "clothing"),
        ("A 27-inch monitor with a 144 Hz refresh rate, adjustable stand, and thin bezels for multi-"
         "screen setups.", "electronics"),
        ("Portable power bank, 20,000 mAh, charges two phones at once and slips easily into a "
         "backpack.", "electronics"),
        ("Wireless mouse with adjustable DPI, a USB receiver, and a rechargeable cell rated for "
         "roughly seventy hours.", "electronics"),
        ("A gripping detective novel set in 1920s Shanghai; the narrator's voice is sharp and witty.", "books"),
        ("These jeans fit perfectly around the waist but the hem was two inches too long for me.", "clothing"),
        ("Stylish knit beanie, though it itches around the forehead if worn for more than an hour.", "clothing"),
        ("Stopped charging after three weeks, and support never answered my emails. Avoid this model.", "electronics"),
        ("The stovetop kettle whistles loudly when the water boils, and the handle stays cool to the"
         " touch.", "kitchen"),
        ("Dutch oven, 6 quarts, enameled interior, suitable for braising, soups, and bread baking.", "kitchen"),
        ("Third volume in the fantasy series. It ties up most loose ends, though the ending feels rushed.", "books"),
        ("Collection of short poems about grief and gardening. Some hit hard, others felt unfinished.", "books"),
        ("The whisk is fine. It mixes pancake batter well enough, though the wires bend a little.", "kitchen"),
        ("My copy arrived with a creased cover and several pages printed upside down.", "books"),
        ("Men's leather belt, brown, with a brushed silver buckle, available in waist sizes 30 "
         "through 42.", "clothing"),
        ("Paperback edition, 312 pages, includes a new afterword by the author and discussion "
         "questions for reading groups.", "books"),
        ("The wool sweater is soft, warm, and hasn't pilled after a dozen washes. Buying another color.", "clothing"),
        ("Silicone spatulas that handle high heat without melting. Perfect for scraping batter out "
         "of a bowl.", "kitchen"),
    ],
    "urgency": [
        ("Stop the release: the build we're about to push wipes user settings on upgrade, and it "
         "goes live in ten minutes.", "urgent"),
        ("Could you send me the slides from last week's workshop whenever you have a spare moment?", "routine"),
        ("The server room is at 38 degrees and climbing because the cooling unit failed; we need to "
         "start shutting racks down.", "urgent"),
        ("We're planning to migrate the team wiki to a new platform sometime next quarter; details "
         "to follow.", "routine"),
        ("A student in Room 14 is having a severe allergic reaction; bring the EpiPen from the "
         "nurse's office immediately.", "urgent"),
        ("I found a nice article on sourdough baking, sending you the link for when you're bored at "
         "the weekend.", "routine"),
        ("Thanks for your feedback on the app's colour scheme, we've passed it to the design team "
         "for a future update.", "routine"),
        ("The library is collecting donated books for its summer fair, so drop any off before the "
         "end of term.", "routine"),
        ("The courier is outside and will leave in five minutes if no one signs for the passport "
         "delivery, can you come down?", "urgent"),
        ("Your annual check-up is due in about two months; call the surgery whenever it suits you to book.", "routine"),
        ("The fire alarm panel in the west wing is showing a fault while the building is full of "
         "visitors, send someone at once.", "urgent"),
        ("Pharmacy flagged a dosing error on the 3 pm insulin order for room 8, so hold it and call "
         "them back right away.", "urgent"),
        ("Happy birthday for Thursday! Let's grab dinner sometime next week to celebrate properly.", "routine"),
        ("The hotel says our booking doesn't exist and it's 11 pm; forward me the confirmation email"
         " immediately, please.", "urgent"),
        ("Mum says Sunday lunch is at hers next weekend, so bring a dessert if you feel like it.", "routine"),
        ("The VPN is down for the whole sales team and the quarterly forecast call with the board "
         "starts in twenty minutes.", "urgent"),
        ("Year 9 will start a new reading programme after half term; no action is needed from families.", "routine"),
        ("Every phone line in the call centre dropped at once and customers can't reach us; escalate"
         " to the carrier immediately.", "urgent"),
        ("Please collect Mia from school right now; she was sick in class and the office needs "
         "someone to pick her up.", "urgent"),
        ("Feature request received: we'll consider adding a dark mode to the product roadmap for "
         "next year.", "routine"),
        ("Your dog got out through the gate and is running toward the main road, come quickly!", "urgent"),
        ("A man is trying car door handles on our street right now, I've called the police, so lock "
         "your garage.", "urgent"),
        ("Parents' evening is scheduled for the second week of March; booking slots will open later "
         "in the term.", "routine"),
        ("Our train was cancelled and the last connecting bus leaves in 30 minutes, please book us a"
         " taxi to the station now.", "urgent"),
        ("Ward 3 has run out of oxygen cylinders and two patients need them within the hour, please "
         "send stock up now.", "urgent"),
        ("Hi neighbour, we're planning a small garden party in June and you'd be very welcome to join us.", "routine"),
        ("When you get a chance, could you update your profile photo in the company directory?", "routine"),
        ("Our gate has changed to B47 and boarding closes in fifteen minutes, so run if you are "
         "still at security.", "urgent"),
        ("Dad wants to know if you still have his old camping stove, as he might borrow it in the summer.", "routine"),
        ("Would you mind wheeling our recycling bin back in next time you're passing? No hurry at all.", "routine"),
        ("Smoke is coming from the breaker panel in the basement, please get everyone out of the "
         "building now.", "urgent"),
        ("Patient in bed 12 has a blood pressure of 70 over 40 and is unresponsive; we need a doctor"
         " at the bedside now.", "urgent"),
        ("The grant application portal closes at 5 pm today and we still need your signature on the "
         "budget page.", "urgent"),
        ("The main database server just went down and customers cannot log in; can whoever is on "
         "call look at it immediately?", "urgent"),
        ("The client moved the pitch to 2 pm today, so I need the final slides in my inbox within "
         "the next hour.", "urgent"),
        ("The hospital cafeteria is trialling a new vegetarian menu over the next few months, and "
         "feedback is welcome.", "routine"),
        ("The school bus has broken down on the motorway with the children on board; parents, please"
         " come to the services at junction 9 now.", "urgent"),
        ("Your mum fell in the kitchen and can't get up, please come home straight away, the "
         "ambulance is on its way.", "urgent"),
        ("The printer on the third floor has been a bit slow lately; no rush, but could IT take a "
         "look sometime this week?", "routine"),
        ("Water is pouring through your floor into my flat below, can you turn off your main valve "
         "right away?", "urgent"),
        ("I smell gas in the hallway near your door, please don't switch on any lights and come "
         "outside now.", "urgent"),
        ("The tax return is due at midnight tonight and the system says two forms are still missing,"
         " can you upload them now?", "urgent"),
        ("I'm thinking about a weekend in Lisbon next spring, any tips on neighbourhoods to stay in?", "routine"),
        ("Our payment page has been failing for every checkout for ten minutes, and we are losing "
         "orders as we speak.", "urgent"),
        ("The nurses' rota for the Christmas period will be posted on the ward noticeboard in early "
         "November.", "routine"),
        ("I've been thinking we could repaint the spare room in the autumn, what colours do you like?", "routine"),
        ("Our holiday flights for August are booked; I'll share the full itinerary once the hotel "
         "confirms.", "routine"),
        ("Just a heads-up that the office kitchen will be getting a new coffee machine sometime next"
         " month.", "routine"),
        ("Design software licences renew in November, so let me know by October if you still need yours.", "routine"),
        ("Someone got into the CFO's email account and is sending wire transfer requests; reset the "
         "password right now.", "urgent"),
        ("Little Sam has a fever of 40 and is struggling to breathe, I'm taking him to A&E, can you "
         "meet us there?", "urgent"),
        ("The new visiting hours for the maternity ward come into effect on the first of next month.", "routine"),
        ("Reminder: the annual staff survey opens on the 20th of next month and runs for three weeks.", "routine"),
        ("Just letting you know my passport renewal came through, so the autumn trip is all set.", "routine"),
        ("Grandpa's pacemaker alarm is beeping and he says he feels dizzy, call me back the moment "
         "you see this.", "urgent"),
        ("Could we move our monthly one-to-one to the following Tuesday? Either morning or afternoon"
         " works for me.", "routine"),
        ("Our street's annual clean-up day is pencilled in for the last Saturday in September.", "routine"),
        ("Your ticket about changing the display language has been logged, and we'll reply within "
         "five working days.", "routine"),
        ("The quarterly newsletter draft is in the shared folder; comments are welcome any time "
         "before the end of the month.", "routine"),
        ("URGENT: the contract must be countersigned and returned by 4 pm today or the supplier "
         "withdraws the offer.", "urgent"),
    ],
}
