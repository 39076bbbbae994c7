"""A constructed 16-minute meeting with four known topics, four minutes each.

Each sentence is one subtitle cue of 8 s, 20 s apart, so the topics change at 240 s,
480 s and 720 s; every topic has its own words (the budget, the battery, the colours
of the case, the marketing campaign), and a decision, an action item or an open
question in each (:data:`SAID`). Written for the chapter and summary tests: the transcript
comes from a sidecar ``.srt``, so no speech recognition is involved.

:data:`TOPICS_ZH` is the same meeting in Chinese, at the same times, for chapters of a
language written without spaces (its sidecar is ``<stem>.zh.srt``, so its units are
Chinese).
"""

from __future__ import annotations

from pathlib import Path

TOPICS: dict[str, list[str]] = {
    "budget": [
        "Let's start with the budget for the new remote control.",
        "The budget allows twelve euros fifty per unit for production.",
        "Our finance team says the budget cannot grow this year.",
        "If we go over budget the selling price has to rise to thirty euros.",
        "The production cost of the chips takes most of the budget.",
        "We should keep a reserve in the budget for the packaging.",
        "The budget spreadsheet shows the cost of every component.",
        "Accounting wants the final budget numbers by Friday.",
        "Cheaper buttons would save two euros of the budget.",
        "The profit target is fifty million euros on this budget.",
        "We decided to fix the budget at twelve euros fifty per remote.",
        "That settles the budget and the production costs.",
    ],
    "battery": [
        "Now the battery: how long should one battery last?",
        "A lithium battery lasts two years but costs more.",
        "Two standard AA batteries are cheaper and easy to replace.",
        "The battery compartment needs a sliding cover.",
        "A kinetic charger could recharge the battery when the remote is shaken.",
        "Solar cells on the top could charge the battery in daylight.",
        "The battery voltage drops when the infrared light flashes.",
        "We need a low battery warning light on the remote.",
        "Rechargeable batteries need a charging dock on the table.",
        "I'll send the charging dock quotes to everyone by Friday.",
        "Users hate changing batteries every few months.",
        "So the battery will be two rechargeable cells with a dock.",
    ],
    "colours": [
        "Next item is the colour and the shape of the case.",
        "Our research shows that fruit and vegetable colours are in fashion.",
        "A yellow case shaped like a banana would stand out.",
        "The case could be made of soft rubber in bright colours.",
        "Dark grey plastic looks old fashioned to young people.",
        "The logo should be printed in the corporate colour on the case.",
        "A curved shape fits better in the palm of the hand.",
        "The rubber case also protects the remote when it falls.",
        "We could offer the case in three colours: yellow, green and red.",
        "Spongy rubber feels nice but collects dust.",
        "Let's go with a curved yellow case with a rubber grip.",
        "That decides the colours and the shape.",
    ],
    "marketing": [
        "Finally, the marketing campaign for the launch.",
        "The advertising should target people between fifteen and thirty five.",
        "Television commercials are expensive, so we start online.",
        "Social media influencers could show the remote in short videos.",
        "The slogan of the campaign will be put the fashion in electronics.",
        "Shops want a display stand for the launch week.",
        "The campaign should start two weeks before the remote is in shops.",
        "A competition with a free remote would attract customers.",
        "Marketing will measure the campaign by online sales.",
        "We still need to decide the price of the launch bundle.",
        "The launch advertising budget belongs to the marketing department.",
        "You need to prepare the campaign plan for next meeting.",
    ],
}
TOPICS_ZH: dict[str, list[str]] = {
    "预算": [
        "我们先谈新遥控器的预算。",
        "预算允许每个产品十二欧元五十。",
        "财务部门说今年的预算不能增加。",
        "如果超出预算，售价就要涨到三十欧元。",
        "芯片的生产成本占了预算的大部分。",
        "预算里应该留一部分给包装。",
        "预算表格列出了每个零件的成本。",
        "会计部门星期五要最终的预算数字。",
        "便宜的按钮可以节省两欧元预算。",
        "这个预算的利润目标是五千万欧元。",
        "我们决定把预算定在每个遥控器十二欧元五十。",
        "预算和生产成本就这样定了。",
    ],
    "电池": [
        "现在说电池：一块电池应该用多久？",
        "锂电池能用两年，但是价格更高。",
        "两节普通电池便宜，也容易更换。",
        "电池仓需要一个滑动的盖子。",
        "动能充电器可以在摇晃时给电池充电。",
        "顶部的太阳能板白天可以给电池充电。",
        "红外灯闪的时候电池电压会下降。",
        "遥控器上需要一个电池电量低的指示灯。",
        "充电电池需要放在桌上的充电座。",
        "我星期五把充电座的报价发给大家。",
        "用户讨厌每几个月换一次电池。",
        "所以电池用两节充电电池加一个充电座。",
    ],
    "外壳": [
        "下一项是外壳的颜色和形状。",
        "我们的调查显示水果和蔬菜的颜色很流行。",
        "香蕉形状的黄色外壳会很显眼。",
        "外壳可以用鲜艳颜色的软橡胶做。",
        "深灰色塑料外壳对年轻人来说太老气。",
        "公司标志应该印在外壳上。",
        "弯曲的外壳更适合握在手掌里。",
        "橡胶外壳在遥控器掉落时也能保护它。",
        "外壳可以有黄色、绿色和红色三种。",
        "海绵橡胶手感好，但是容易沾灰。",
        "我们选弯曲的黄色外壳，加橡胶握把。",
        "外壳的颜色和形状就这样决定了。",
    ],
    "广告": [
        "最后是上市的广告活动。",
        "广告应该针对十五到三十五岁的人。",
        "电视广告太贵，所以我们先在网上做。",
        "网红可以在短视频里展示遥控器。",
        "广告口号是把时尚带进电子产品。",
        "商店希望上市那周有一个广告展台。",
        "广告活动应该在上市前两周开始。",
        "送免费遥控器的比赛能吸引顾客。",
        "市场部会用网上销量衡量广告效果。",
        "我们还需要决定套装的价格。",
        "上市的广告费用归市场部管。",
        "你要为下次会议准备广告计划。",
    ],
}
# What the summary must find: (kind, the sentence's first words).
SAID = (
    ("decisions", "We decided to fix the budget"),
    ("action_items", "I'll send the charging dock quotes"),
    ("decisions", "Let's go with a curved yellow case"),
    ("open_questions", "We still need to decide the price"),
    ("action_items", "You need to prepare the campaign plan"),
)
TOPIC_SECONDS = 240.0
CUE_STEP = 20.0
CUE_LENGTH = 8.0


def cues(topics: dict[str, list[str]] = TOPICS) -> list[tuple[float, float, str, str]]:
    """``(start, end, text, topic)`` of every cue of ``topics``, in time order."""
    timed = []
    for number, (topic, sentences) in enumerate(topics.items()):
        for i, sentence in enumerate(sentences):
            start = number * TOPIC_SECONDS + i * CUE_STEP
            timed.append((start, start + CUE_LENGTH, sentence, topic))
    return timed


def write_srt(path: Path, topics: dict[str, list[str]] = TOPICS) -> Path:
    def stamp(seconds: float) -> str:
        whole = int(seconds)
        return f"{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d},000"

    blocks = [
        f"{n}\n{stamp(start)} --> {stamp(end)}\n{text}\n"
        for n, (start, end, text, _) in enumerate(cues(topics), start=1)
    ]
    path.write_text("\n".join(blocks), encoding="utf-8")
    return path


def length() -> float:
    return TOPIC_SECONDS * len(TOPICS)
