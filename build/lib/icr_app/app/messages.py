"""The backend's messages to the visitor (a bad upload, unusable labels, a wrong file) in the visitor's language.

The backend writes them in English for the CLI and the app alike (`TaskError`, `LabelError`, `ArtefactError`);
the page shows them through `context.user_errors`, which passes each through `translated_error`. A message is
recognised by its English pattern and rewritten with the same details (file name, rows, labels). One that no
pattern knows is shown as it is: an English message is still better than none.
"""

from __future__ import annotations

import re

from icr_app.app.i18n import CHINESE, language

FILE = r"(?P<f>.+?)"
# (the English message, the Chinese one with the same named parts); a literal brace is doubled in the Chinese.
CHINESE_MESSAGES: tuple[tuple[str, str], ...] = (
    (FILE + r": no examples found \(the file or table is empty\)", "{f}：没有找到示例（文件或表格为空）"),
    (FILE + r": no examples found", "{f}：没有找到示例"),
    (FILE + r": (?P<n>\d+) rows is over the limit of (?P<max>\d+)", "{f}：共 {n} 行，超过了 {max} 行的上限"),
    (FILE + r": (?P<n>\d+) row\(s\) have a blank input or output \(rows (?P<rows>.+)\)",
     "{f}：有 {n} 行的输入或输出为空（第 {rows} 行）"),
    (FILE + r": at least 2 examples are needed, got (?P<n>\d+)", "{f}：至少需要 2 个示例，现在只有 {n} 个"),
    (FILE + r": every example has the label '(?P<label>.*)'; a classification task needs at least two labels "
            r"\(set the task type to 'open' if this is a generation task\)",
     "{f}：每个示例的标签都是“{label}”；分类任务至少需要两个标签（如果这是生成任务，请把任务类型设为 open）"),
    (r"no (?P<role>input|output) column '(?P<want>.*)'; the columns are: (?P<cols>.*)",
     "没有名为“{want}”的 {role} 列；现有的列是：{cols}"),
    (r"no (?P<role>input|output) column found; name one of (?P<names>.*) \(columns are: (?P<cols>.*)\)",
     "没有找到 {role} 列；请把列命名为 {names} 之一（现有的列：{cols}）"),
    (r"each record must be an object with an input and an output field",
     "每条记录都必须是带有 input 和 output 字段的对象"),
    (FILE + r": (?P<mb>[\d.]+) MB is over the (?P<max>\d+) MB limit", "{f}：{mb} MB，超过了 {max} MB 的上限"),
    (FILE + r": not UTF-8 text \(byte (?P<b>\d+)\); save the file as UTF-8",
     "{f}：不是 UTF-8 文本（第 {b} 个字节）；请把文件另存为 UTF-8"),
    (FILE + r": the file is empty", "{f}：文件是空的"),
    (FILE + r": malformed (?P<fmt>CSV|TSV): (?P<err>.*)", "{f}：{fmt} 格式有误：{err}"),
    (FILE + r": no header row", "{f}：没有表头行"),
    (FILE + r": some rows have more fields than the header", "{f}：有些行的字段比表头多"),
    (FILE + r": malformed JSON (?:at|on) line (?P<line>\d+): (?P<err>.*)", "{f}：JSON 格式有误（第 {line} 行）：{err}"),
    (FILE + r': JSON must be a list of \{"input", "output"\} objects',
     '{f}：JSON 必须是由 {{"input", "output"}} 对象组成的列表'),
    (FILE + r": unsupported file type '(?P<ext>.*)'; use \.csv, \.tsv, \.json or \.jsonl",
     "{f}：不支持的文件类型“{ext}”；请使用 .csv、.tsv、.json 或 .jsonl"),
    (FILE + r": no such file \(built-in tasks: (?P<names>.*)\)", "{f}：没有这个文件（内置任务：{names}）"),
    (r"label '(?P<label>.*)' tokenises to nothing", "标签“{label}”分词后为空"),
    (r"labels '(?P<a>.*)' and '(?P<b>.*)' tokenise to the same tokens, so the model cannot tell them apart; rename "
     r"one of them", "标签“{a}”和“{b}”分词后是相同的词元，模型无法区分它们；请重命名其中一个"),
    (r"the anchors analyses score the first answer token, and two labels share it; rename the labels so that "
     r"their first tokens differ",
     "锚点分析只看答案的第一个词元，而有两个标签的第一个词元相同；请重命名标签，使它们的第一个词元不同"),
    (FILE + r": not a readable ICL Lab file \(corrupted or truncated\?\): (?P<err>.*)",
     "{f}：不是可读取的 ICL Lab 文件（损坏或被截断？）：{err}"),
    (FILE + r": the tensor data does not match its checksum \(the file is corrupted\)",
     "{f}：张量数据与校验和不符（文件已损坏）"),
    (FILE + r" was made for model (?P<found>.*), not the loaded (?P<loaded>.*); build it again for this model",
     "{f} 是为模型 {found} 制作的，不是当前加载的 {loaded}；请为这个模型重新构建"),
    (r"this (?P<what>.+?) was (?:built for|trained on) model (?P<found>.+?), but the loaded model is (?P<loaded>.+?); "
     r"(?:rebuild it|train it again) for this model",
     "这个 {what} 是为模型 {found} 制作的，但当前加载的模型是 {loaded}；请为这个模型重新构建"),
    (r"no pretrained ICR router ships for model '(?P<model>.*)' \(routers ship for: (?P<shipped>.*)\); train one "
     r"with `(?P<cmd>[^`]*)` and name its folder \(or a folder of routers\) with --icr-router or \$ICL_LAB_ROUTERS",
     "模型“{model}”没有随应用提供预训练的 ICR 路由器（已提供的模型：{shipped}）；可以用 `{cmd}` 训练一个，"
     "再用 --icr-router 或 $ICL_LAB_ROUTERS 指向它的文件夹（或存放多个路由器的文件夹）"),
    (r"no ICR router for model (?P<model>\S+) in (?P<folder>.*) \(routers there: (?P<there>.*)\); train one with "
     r"`(?P<cmd>[^`]*)`",
     "文件夹 {folder} 中没有模型 {model} 的 ICR 路由器（其中的路由器：{there}）；可以用 `{cmd}` 训练一个"),
)
PATTERNS = tuple((re.compile(english, re.DOTALL), chinese) for english, chinese in CHINESE_MESSAGES)


def in_chinese(message: str) -> str:
    """`message` rewritten in Chinese when a pattern knows it, else as it is."""
    for pattern, chinese in PATTERNS:
        found = pattern.fullmatch(message)
        if found:
            return chinese.format(**found.groupdict())
    return message


def translated_error(message: str) -> str:
    """A backend message in the visitor's language."""
    return in_chinese(message) if language() == CHINESE else message
