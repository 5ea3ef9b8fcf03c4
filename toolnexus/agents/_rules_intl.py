"""Instruction overrides in languages other than English, for the memory scanner.

Latin-script languages are read in the skeleton (accents dropped, lowercase:
"précédentes" reads "precedentes", "früheren" reads "fruheren"); others in
`plain` (NFKC, lowercase), which the look-alike map would garble. Each rule
needs both a verb of dropping ("ignore", "forget") and what is dropped
(instructions, rules) with a word that points at the model's own ("previous",
"all", "your", "system"), so everyday sentences with the same verbs pass:
"L'utilisateur préfère ignorer les notifications le week-end".
"""

from __future__ import annotations

from ._rules import Rule

__all__ = ["INTL_RULES"]

_WHY = "tells the model to drop its instructions"


def _latin(lang: str, verbs: str, nouns: str, quals: str, extra: str = "") -> Rule:
    """verb ... (qualifier ...) noun, or verb ... noun qualifier, within a few words."""
    gap = r"(?:\S+\s){0,4}?"
    source = (
        r"\b(?:" + verbs + r")\s" + gap + r"(?:" + quals + r")\s" + gap + r"(?:" + nouns + r")\b"
        r"|\b(?:" + verbs + r")\s" + gap + r"(?:" + nouns + r")\s(?:\S+\s){0,2}?(?:" + quals + r")\b"
        r"|\b(?:" + nouns + r")\s(?:\S+\s){0,3}?(?:" + quals + r")\s(?:\S+\s){0,3}?(?:" + verbs
        + r")\b"
    )
    if extra:
        source += "|" + extra
    return Rule(
        id=f"override-{lang}",
        category="instruction-override",
        why=_WHY,
        source=source,
        reads=("skeleton", "uncommented", "leet"),
    )


def _script(lang: str, source: str) -> Rule:
    return Rule(
        id=f"override-{lang}",
        category="instruction-override",
        why=_WHY,
        source=source,
        reads=("plain",),
    )


INTL_RULES: tuple[Rule, ...] = (
    _latin(
        "fr",
        r"ignore[zrs]?|oublie[zrs]?|neglige[zr]?|ne\stiens\spas\scompte|ne\stenez\spas\scompte|"
        r"fais\sabstraction|faites\sabstraction|laisse[zr]?\stomber|ecarte[zr]?|abandonne[zr]?",
        r"instructions?|consignes?|directives?|regles|ordres|indications|prompt|"
        r"recommandations",
        r"precedentes?|anterieures?|toutes|tous|tes|vos|ci-dessus|ci\sdessus|initiales?|"
        r"du\ssysteme|systeme|d'origine|originales?",
        r"\boublie[zr]?\stout\sce\s(?:qu'on\st'a|que\sl'on\st'a|qui\sprecede|qu'on\svous\sa)"
        r"|\b(?:tes|vos)\s(?:vraies|nouvelles|seules)\s(?:instructions|consignes)\s(?:sont|:)",
    ),
    _latin(
        "de",
        r"ignorier(?:e|en|t)?|vergiss|vergessen|missachte[nt]?|beachte\snicht|verwirf|"
        r"verwerfen|uberschreibe|setze\s\w+\sausser\skraft",
        r"anweisungen|anordnungen|instruktionen|regeln|vorgaben|befehle|richtlinien|"
        r"systemanweisungen|systemprompt|prompt",
        r"alle|allen|vorherigen|bisherigen|fruheren|obigen|vorigen|ursprunglichen|deine|"
        r"ihre|system|vorangegangenen|vorhergehenden",
        r"\bvergiss\salles(?:,)?\swas\s(?:dir|man\sdir|ich\sdir)\s(?:\w+\s)?(?:gesagt|befohlen)",
    ),
    _latin(
        "es",
        r"ignora|ignore|ignorar|olvida|olvide|olvidar|olvidate|descarta|descartar|omite|omitir|"
        r"haz\scaso\somiso\sde|no\shagas\scaso\sa|desobedece",
        r"instrucciones|indicaciones|ordenes|reglas|directrices|normas|directivas|prompt",
        r"anteriores|previas|todas|tus|sus|iniciales|del\ssistema|de\sarriba|originales",
        r"\bolvida\stodo\slo\s(?:que\ste\s(?:dijeron|han\sdicho)|anterior)",
    ),
    _latin(
        "pt",
        r"ignore|ignora|ignorar|esqueca|esquece|esquecer|desconsidere|desconsidera|"
        r"descarte|descarta|despreze|nao\ssiga",
        r"instrucoes|instrucao|ordens|regras|diretrizes|orientacoes|diretivas|prompt",
        r"anteriores|previas|todas|suas|tuas|iniciais|do\ssistema|acima|originais",
    ),
    _latin(
        "it",
        r"ignora|ignorare|ignori|dimentica|dimenticare|dimentichi|trascura|non\sconsiderare|"
        r"scarta|tralascia|disobbedisci",
        r"istruzioni|regole|direttive|indicazioni|ordini|prompt|linee\sguida",
        r"precedenti|tutte|tue|sue|iniziali|di\ssistema|del\ssistema|sopra|originali",
    ),
    _latin(
        "nl",
        r"negeer|vergeet|veronachtzaam|gooi\sweg",
        r"instructies|regels|aanwijzingen|opdrachten|richtlijnen|prompt",
        r"vorige|eerdere|alle|je|jouw|bovenstaande|oorspronkelijke|systeem",
    ),
    _latin(
        "pl",
        r"zignoruj|ignoruj|zapomnij|pomin|odrzuc|nie\sstosuj\ssie\sdo",
        r"instrukcje|instrukcji|polecenia|polecen|zasady|zasad|reguly|regul|wytyczne|wytycznych",
        r"poprzednie|poprzednich|wszystkie|wszystkich|wczesniejsze|wczesniejszych|twoje|"
        r"twoich|systemowe|powyzsze",
    ),
    _latin(
        "sv",
        r"ignorera|glom|strunta\si|bortse\sfran",
        r"instruktioner|instruktionerna|regler|reglerna|direktiv|anvisningar",
        r"tidigare|alla|dina|ovanstaende|ursprungliga",
    ),
    _latin(
        "id",
        r"abaikan|lupakan|acuhkan|jangan\sikuti",
        r"instruksi|perintah|aturan|petunjuk",
        r"sebelumnya|semua|sebelum\sini|di\satas|awal|sistem",
    ),
    _latin(
        "tr",
        r"yok\ssay|yoksay|gormezden\sgel|unut|dikkate\salma|uyma",
        r"talimat\w*|kural\w*|yonerge\w*|komut\w*|direktif\w*",
        r"onceki|tum|butun|yukaridaki|ilk|sistem",
    ),
    _latin(
        "vi",
        r"bo\squa|quen|phot\slo|khong\stuan\stheo|lo\sdi",
        r"huong\sdan|chi\sdan|chi\sthi|quy\stac|lenh|yeu\scau",
        r"truoc\sdo|truoc|tat\sca|o\stren|ban\sdau|he\sthong|cua\sban",
    ),
    _script(
        "ru-uk",
        r"(?:игнорируй(?:те)?|проигнорируй(?:те)?|забудь(?:те)?|не\sобращай(?:те)?\sвнимания\sна|"
        r"не\sучитывай(?:те)?|отбрось(?:те)?|отмени(?:те)?|не\sследуй(?:те)?|ігноруй(?:те)?|"
        r"проігноруй(?:те)?|забудь(?:те)?)\s(?:\S+\s){0,3}?(?:все|всі|усі|предыдущие|прежние|"
        r"предшествующие|свои|твои|системные|изначальные|вышеуказанные|попередні|свої|твої|"
        r"системні|початкові)\s(?:\S+\s){0,2}?(?:инструкции|указания|правила|команды|установки|"
        r"директивы|ограничения|інструкції|вказівки|правила|команди|обмеження)"
        r"|(?:предыдущие|прежние|все|попередні|всі)\s(?:\S+\s){0,2}?(?:инструкции|указания|"
        r"правила|інструкції|вказівки)\s(?:\S+\s){0,2}?(?:больше\sне\sдействуют|отменены|"
        r"недействительны|більше\sне\sдіють|скасовані)",
    ),
    _script(
        "el",
        r"(?:αγνόησε|αγνοήστε|ξέχασε|ξεχάστε|παράβλεψε)\s(?:\S+\s){0,3}?(?:όλες|τις\sπροηγούμενες|"
        r"προηγούμενες|τις\sαρχικές|σου)\s(?:\S+\s){0,2}?(?:οδηγίες|εντολές|κανόνες)",
    ),
    _script(
        "zh",
        r"(?:忽略|无视|無視|忘记|忘記|忽视|忽視|不要理会|不要理會|抛开|拋開|放弃|放棄|不要遵守|不再遵守|"
        r"停止遵守)[掉了]?.{0,6}?(?:之前|以前|先前|上面|上述|前面|以上|此前|所有|全部|你的|原来|原來|原有|"
        r"系统|系統|一切)(?:的)?.{0,6}?(?:指令|指示|规则|規則|提示|设定|設定|命令|要求|说明|說明|约束|約束)"
        r"|(?:之前|以前|先前|上述|以上|所有)的?(?:指令|指示|规则|規則|设定|設定)(?:全部|都)?(?:作废|作廢|无效|"
        r"無效|失效|不再适用|不再適用)",
    ),
    _script(
        "ja",
        r"(?:以前|これまで|前|上記|先|今まで|すべて|全て|元|最初|システム)の?(?:\S{0,4}?)"
        r"(?:指示|命令|ルール|指令|設定|プロンプト|制約|規則)(?:を|は)?(?:すべて|全て|全部)?"
        r"(?:無視|忘れ|破棄|取り消|捨て)"
        r"|(?:指示|命令|ルール|指令|設定|プロンプト)(?:を|は)(?:すべて|全て|全部)?(?:無視して|忘れて)",
    ),
    _script(
        "ko",
        r"(?:이전|앞의|위의|기존|모든|지금까지의|원래|시스템)\s?(?:의\s)?(?:모든\s)?\S{0,6}?"
        r"(?:지시|지침|명령|규칙|설정|프롬프트|지시사항|제약)\S{0,3}\s?(?:을|를|은|는)?\s?"
        r"(?:모두\s|전부\s)?(?:무시|잊어|잊고|잊으|폐기)",
    ),
    _script(
        "ar",
        r"(?:تجاهل|تجاهلي|تجاهلوا|انس|انسى|إنس|اترك|لا\sتلتزم\sب|لا\sتتبع)\s?(?:\S+\s){0,2}?"
        r"(?:(?:جميع|كل|كافة)\s?(?:التعليمات|الأوامر|القواعد|الإرشادات|التوجيهات)|تعليماتك|أوامرك|"
        r"(?:التعليمات|الأوامر|القواعد|الإرشادات|التوجيهات)\s(?:\S+\s)?(?:السابقة|الأصلية|السابقه|الأولى))",
    ),
    _script(
        "fa",
        r"(?:دستورالعمل|دستورات|قوانین|قواعد)\S{0,6}\s(?:\S+\s){0,2}?(?:قبلی|پیشین|اولیه)\s?"
        r"(?:\S+\s){0,2}?(?:را\s)?(?:نادیده\sبگیر|فراموش\sکن)",
    ),
    _script(
        "he",
        r"(?:התעלם|התעלמי|שכח|שכחי)\s(?:\S+\s){0,2}?(?:מכל\s|מ)?(?:ה)?(?:הוראות|הנחיות|כללים)"
        r"(?:\s(?:הקודמות|המקוריות|שלך))?",
    ),
    _script(
        "hi",
        r"(?:पिछले|पहले\sके|सभी|पूर्व|अपने|सिस्टम)\s(?:\S+\s){0,2}?(?:निर्देशों|निर्देश|नियमों|नियम|आदेशों)"
        r"\s(?:\S+\s){0,2}?(?:को\s)?(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल|छोड़|त्याग)",
    ),
)
