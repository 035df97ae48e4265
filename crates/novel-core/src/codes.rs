//! Every code the binary (and its wrapper `scripts/novel`) can report, in one table: what it
//! means and what to do about it. `docs/errors.md` is generated from this table, and a test in
//! `novel-cli` fails when a code is used in the sources but missing here, or listed here but used
//! nowhere. The CLI fills an empty hint from the table, so every error the author sees says how
//! to fix it.
//!
//! Three kinds of code share the `E_` namespace: errors that end a command (the envelope's
//! `error.code`), findings inside a report (`novel validate`, `novel status`), and reasons a
//! single op of a state delta was rejected (`ops validate` / `ops apply`'s `rejected` list).
//!
//! Layer: ground (the lowest: no file model, no rules).

/// Where a code appears.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeKind {
    /// Ends a command: the envelope's `error.code`, exit 1, 2 or 3.
    Error,
    /// One finding in a report (validate, status, volume check); the command's own error code
    /// says whether it failed.
    Finding,
    /// One rejected op of a state delta.
    Op,
}

impl CodeKind {
    pub fn label_zh(self) -> &'static str {
        match self {
            CodeKind::Error => "命令出错",
            CodeKind::Finding => "检查发现",
            CodeKind::Op => "op 被拒",
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct CodeDoc {
    pub code: &'static str,
    pub kind: CodeKind,
    /// What happened, in one Chinese sentence.
    pub meaning: &'static str,
    /// What to do, in one Chinese sentence (used when the site gives no more specific hint).
    pub hint: &'static str,
}

const fn e(code: &'static str, meaning: &'static str, hint: &'static str) -> CodeDoc {
    CodeDoc {
        code,
        kind: CodeKind::Error,
        meaning,
        hint,
    }
}

const fn f(code: &'static str, meaning: &'static str, hint: &'static str) -> CodeDoc {
    CodeDoc {
        code,
        kind: CodeKind::Finding,
        meaning,
        hint,
    }
}

const fn op(code: &'static str, meaning: &'static str, hint: &'static str) -> CodeDoc {
    CodeDoc {
        code,
        kind: CodeKind::Op,
        meaning,
        hint,
    }
}

/// The table, grouped by area; `docs/errors.md` lists it in this order.
pub const CODES: &[CodeDoc] = &[
    // --- the command line and the project
    e(
        "E_USAGE",
        "命令行写错了：未知命令、缺少参数、参数值不合法，或参数与项目状态不配。",
        "运行 novel help <命令> 查看用法。",
    ),
    e(
        "E_INTERNAL",
        "程序内部出错（程序的缺陷，不是作者的操作问题）。",
        "项目文件不会被写到一半：运行 novel validate 检查，提示有中断的提交时运行 novel chapter recover；把这条信息报告给插件维护者。",
    ),
    e(
        "E_NO_BINARY",
        "插件找不到自己的 novel 程序（从 marketplace 安装后还没安装）。",
        "运行插件目录下的 scripts/install（有预编译的程序时下载，几秒钟；没有时用本机的 Rust 编译；要从镜像下载时加 --mirror <地址>，只需一次），或在 /novel:start 里让它代为运行。",
    ),
    e(
        "E_NOT_PROJECT",
        "从当前目录向上找不到 .checkpoint.json，这里不是小说项目。",
        "进入项目目录再运行，或用 --project 指定；新建项目用 novel init。",
    ),
    e(
        "E_PROJECT_EXISTS",
        "目标目录里已经有项目或同名文件，拒绝覆盖。",
        "换一个新目录，或先把旧内容移走。",
    ),
    e(
        "E_FOLDER_NOT_EMPTY",
        "要建新书的目录里已经有作者自己的文件：新书的十几个文件和目录不往别人的文件中间散放。",
        "给新书一个子目录（novel init <书名> --title …，会新建这个目录），或换一个空目录。",
    ),
    e(
        "E_IO",
        "读写文件失败（不存在、没有权限、磁盘满等）。",
        "按消息里的路径检查文件是否存在、是否可读写、磁盘是否还有空间。",
    ),
    e(
        "E_NOT_UTF8",
        "文件不是 UTF-8 文本。",
        "用编辑器把它另存为 UTF-8（无 BOM 亦可）。",
    ),
    e(
        "E_JSON",
        "JSON 语法错误（消息给出行列）。",
        "按行列修正；由 agent 写出的文件，把错误原样交给它重写一次。",
    ),
    e(
        "E_SCHEMA",
        "文件的内容不符合它那一类文件的格式（字段缺失、类型不对），或一条规则写不成正则。",
        "按消息里的字段修正；novel validate 会给出 JSON 指针。",
    ),
    e(
        "E_UNSAFE_PATH",
        "一个 id 或文件名不能当作路径（含 ..、/ 或不是 slug）。",
        "id 只用小写英文、数字、- 或 _。",
    ),
    e(
        "E_NOT_REGULAR_FILE",
        "staging 里的文件是符号链接或目录；程序只按普通文件读取，不跟随链接。",
        "把它换成普通文件，再重新评审、门控。",
    ),
    e(
        "E_SETTINGS",
        "novel.json 的设置不合法（如门控阈值顺序不对）。",
        "按消息修正 novel.json；novel validate 会指出字段。",
    ),
    e(
        "E_CHECKPOINT",
        ".checkpoint.json 无法读取或内容自相矛盾。",
        "运行 novel validate 查看位置；中断的提交先 novel chapter recover。",
    ),
    e(
        "E_VALIDATION",
        "novel validate 发现错误。",
        "按列出的 文件: 位置: 代码: 说明 与其下的处理办法逐条修正后重新运行。",
    ),
    e(
        "E_PROJECT_PROBLEMS",
        "novel status 读项目时发现问题，结果可能不全。",
        "按列出的问题逐个修复；novel validate 给出更详细的位置。",
    ),
    // --- the lock and the transaction
    e(
        "E_LOCKED",
        "另一个会话持有项目锁，或另一个 novel 命令正在写入同一本书（等了 NOVEL_LOCK_TIMEOUT 秒仍未写完）。",
        "等它结束后重试；确认那个会话已关闭后用 novel chapter recover 清理失效的锁。",
    ),
    e(
        "E_OWNER_PID",
        "给出的 --owner-pid 不是正在运行的进程，不能作为锁的持有者。",
        "省略 --owner-pid（程序自己找本会话的进程），或给出正在运行的进程号。",
    ),
    e(
        "E_LOCK_OWNER",
        "锁不在本会话手里（另一个会话持有它），或给出的令牌不是锁的持有者。",
        "本会话开始的章节不用给令牌；锁在另一个会话手里时等它写完，确认它已关掉再 novel chapter begin N 取回锁。",
    ),
    e(
        "E_NOT_LOCKED",
        "项目当前没有锁：没有在写的章节可推进，也无从释放或续期。",
        "需要写入时先 novel chapter begin N。",
    ),
    e(
        "E_JOURNAL",
        "上一次提交或状态写入被打断，提交日志还在，任何写入都会被拒绝。",
        "先运行 novel chapter recover 补完它。",
    ),
    f(
        "E_WRITER_BUSY",
        "另一个 novel 命令正在写入这本书（提交日志在，写它的命令还在运行），项目文件暂时处于半完成状态。",
        "稍等几秒再看；它写完就会结束，不要运行 recover 或 lock clear。",
    ),
    e(
        "E_STATE",
        "编排状态不允许这一步（如章节在出错待重试、卷还没开）。",
        "照消息里的提示先做前一步，novel next 会说该做什么。",
    ),
    e(
        "E_INFLIGHT",
        "另一章还在写，不能开始新的一章或做需要空闲的操作。",
        "先把那一章写完提交，或 novel chapter fail 记下原因后再处理。",
    ),
    e(
        "E_NOT_INFLIGHT",
        "没有在写的章节。",
        "先 novel chapter begin N。",
    ),
    e(
        "E_STAGE_ORDER",
        "流水线阶段的顺序不对（如未评审就门控）。",
        "按 drafted → refined → judged → 门控 → 提交 的顺序推进。",
    ),
    e(
        "E_STAGING",
        "这一阶段需要的 staging 文件不在或不完整。",
        "让对应的 agent 写出消息里列出的文件，再推进阶段。",
    ),
    e(
        "E_PIPELINE_LOG",
        "staging 里这一章的流水线日志（staging/logs/chapter-NNN-log.json）损坏，程序不会覆盖它。",
        "按消息里的行列修好这个文件（或把它移走，阶段记录会从头开始），再重试。",
    ),
    e(
        "E_CHANGELOG_SHRANK",
        "state/changelog.jsonl 比中断的写入记下的长度还短：它在中断之后被改动过，程序不会补齐它。",
        "从 state/backups/ 或版本库恢复这个文件的原样，再运行 novel chapter recover。",
    ),
    e(
        "E_CHANGELOG_LOST",
        "变更日志不存在或是空的，而状态文件或断点记着已经记录过章节：按空日志重建会把状态清空。",
        "从 state/backups/ 或版本库找回 state/changelog.jsonl 再重建；找不回时不要用 --write，把状态文件从备份放回。",
    ),
    e(
        "E_STATE_MISSING",
        "状态文件 state/current-state.json 不存在，不能开始新的一章。",
        "从 state/backups/ 或版本库找回 state/；只丢了状态文件而变更日志还在时，运行 novel state rebuild --write。",
    ),
    e(
        "E_OUTPUT_TARGET",
        "输出文件（export -o、dashboard -o）会落在书的文件上：程序维护的文件、书的资料文件、资料目录里，或是一个目录。",
        "换一个文件名：放在项目目录下（不在 chapters/、state/ 等资料目录里）、项目的 export/ 里或项目之外。",
    ),
    e(
        "E_STAGING_CHANGED",
        "评审之后 staging 里的稿件又被改过，提交的不再是评审过的稿件。",
        "改动是有意的就重新 chapter stage judged 并重新评审、门控；否则恢复这些文件。",
    ),
    e(
        "E_GATE",
        "这一章还没有过门控，或门控结论不允许提交。",
        "先 novel chapter gate N；结论为 revise/rewrite 时按它修改。",
    ),
    e(
        "E_EVALUATION",
        "评估没有守住评审的约定：引文不在正文里或只是几个字、一句引文撑几个维度、修订位置引错、建议与分数不符、高置信违规没进 violations、必须目标没有核查行、退回却没有修订指令，或修订轮没有逐条判定上一轮的指令、拿没改过的句子证明改过（data.findings 逐条列出）。",
        "把 data.findings 原样交回评审改评估文件，再 novel chapter stage judged。",
    ),
    e(
        "E_EDIT_RATIO",
        "润色编辑对初稿的改动（叙述或对话，按字计）超过了 novel.json 的 refine.max_edit_ratio（默认 15%）。",
        "改动最多的段落回到初稿（staging/logs/chapter-NNN-draft.md）的说法（修改清单撤掉对应的条目，被退回的清单已移走），再 novel chapter stage refined。",
    ),
    e(
        "E_CHANGE_LIST",
        "润色编辑的修改清单（staging/logs/chapter-NNN-edits.md）有条目套不上正文：「原：」在正文里找不到、不止一处、两条改同一段，或缺了「改：」。",
        "按 data 里逐条的说明改好清单（「原：」从正文一字不改地抄），再 novel chapter stage refined（二次润色：stage polished）。",
    ),
    e(
        "E_REPAIR",
        "局部修补的修补稿（staging/repairs/chapter-NNN-ending.md 或 -opening.md）放不进正文：缺了、空的、比上限长（原来那几段的两倍再加 200 字）、和原来一字不差、带了标题行，或正文文件在修补范围之外被改过。",
        "按 error.message 逐条交回写手（任务：修补）重写修补稿，再 novel chapter stage repaired。",
    ),
    e(
        "E_REPAIR_REVIEW",
        "评审对局部修补的复核（staging/evaluations/chapter-NNN-repair.json）不合约定：章号不对，或修补过的某一处没有复核。",
        "修补过的每一处（资料包 repair 段列出的）各写一条 reviews，再 novel chapter stage judged。",
    ),
    e(
        "E_NO_EVALUATION",
        "staging 里没有这一章的评估文件。",
        "先派评审写出 chapter-NNN-eval.json。",
    ),
    e(
        "E_SECOND_JUDGE",
        "关键章缺少独立的第二份评估，或第二份与主评估一模一样。",
        "由另一位裁判（另一个模型）重新打分，写入 chapter-NNN-eval-secondary.json。",
    ),
    e(
        "E_STATE_DIVERGED",
        "状态文件与变更日志的回放对不上，提交或收卷不能在错的状态上继续。",
        "运行 novel state rebuild 查看差异，确认后 --write。",
    ),
    e(
        "E_CHAPTER_ORDER",
        "变更日志按章节顺序记录，这个章节号比已记录的更早。",
        "改稿先 novel state rebuild --until-chapter 回退；补记状态写当前章或更晚。",
    ),
    f(
        "E_STATE_EDITED",
        "状态文件不是程序最后一次写下的那一份（在 novel 之外被改过，或放回了旧备份）。",
        "运行 novel state rebuild 查看与变更日志的差异；确认是误改就 novel state rebuild --write，有意的修改请写成增量用 novel ops apply --manual 记下。",
    ),
    f(
        "E_CHAPTER_EDITED",
        "已提交的章节正文或评估与提交时写下的不同（在 novel 之外被改过），或者不见了。",
        "作者自己改的可以保留；改动涉及事实（人物去向、生死、道具、伏笔）时，写一份手动增量用 novel ops apply --manual 记下，让状态跟上正文。",
    ),
    e(
        "E_CHAPTER_AHEAD",
        "增量或跳过记录的章节号超过了这本书的下一章：先记下它，之后每一章真实的增量都会被章节顺序挡住。",
        "把 chapter 写成下一章或变更日志已记录到的那一章。",
    ),
    // --- state deltas and the state engine
    e(
        "E_DELTA",
        "状态增量文件本身不合法（章节号、故事线、字段缺失）。",
        "把错误交给摘要员重写增量；仍不行就 novel ops skip。",
    ),
    e(
        "E_OPS_REJECTED",
        "状态增量里有 op 被拒绝（全部被拒时什么也不写）。",
        "把 rejected 列表（原因与修正提示）交给摘要员重写这些 op。",
    ),
    e(
        "E_STATE_VERSION",
        "增量基于的状态版本不是当前版本。",
        "用当前状态重新生成增量（摘要员的资料包里有当前版本）。",
    ),
    e(
        "E_SETTINGS_LOCAL",
        "Claude Code 的用户设置（~/.claude/settings.json）或书目录里的 .claude/settings.local.json 不是合法的设置（不是对象，或 permissions.allow 不是字符串数组），或者找不到用户设置（HOME 没有设置）：两个文件都没有改动。",
        "修正消息里点名的那个文件或删掉它，再运行 novel permissions --write。",
    ),
    e(
        "E_DELTA_REPEATED",
        "这份增量的 op 与变更日志里同一章的某一行完全相同：它已经合并过，再合并会把物品、计数重复一遍。",
        "不要再合并它；要改状态，另写一份只含改动的增量（novel state at 查看现状）。",
    ),
    e(
        "E_STRICT",
        "--strict 模式下有 op 被拒，整份增量没有应用。",
        "修正被拒的 op 后重新 apply，或去掉 --strict 只应用通过的 op。",
    ),
    e(
        "E_REPLAY",
        "变更日志回放失败（某一行应用不上）。",
        "按消息里的行号检查 state/changelog.jsonl；novel validate 会给出位置。",
    ),
    e(
        "E_STATE_DIFFERS",
        "从变更日志重建的状态与磁盘上的不同。",
        "确认差异后运行 novel state rebuild --write，以重建结果为准（旧文件会先备份）。",
    ),
    e(
        "E_STATE_SHAPE",
        "当前状态文件的结构不对（不是 JSON 对象）。",
        "运行 novel validate 检查 state/current-state.json，必要时 novel state rebuild --write。",
    ),
    e(
        "E_NOT_SKIPPED",
        "这一章不在被跳过增量的章节里，不能记为已补。",
        "novel status 列出被跳过的章节；只为其中的章节补记。",
    ),
    e(
        "E_STORYLINES",
        "读不了 storylines/storylines.json，无法核对增量的故事线。",
        "运行 novel validate 修正该文件。",
    ),
    e(
        "E_NO_ENTITY",
        "项目里没有这个实体（角色、物品、地点、势力或伏笔）。",
        "检查名字或 slug；novel state history 的提示列出相近的实体。",
    ),
    op(
        "E_OP_SHAPE",
        "op 不是 JSON 对象。",
        "每个 op 写成 {\"op\":\"set\",\"path\":\"characters.lin-feng.location\",\"value\":\"…\"}。",
    ),
    op(
        "E_OP_KIND",
        "op 的种类不在 set/add/remove/inc/foreshadow 之内。",
        "改用这五种之一。",
    ),
    op(
        "E_OP_PATH",
        "op 缺少 path，或 path 不是字符串。",
        "path 写点分路径，如 characters.lin-feng.location。",
    ),
    op(
        "E_OP_PATH_DEPTH",
        "path 的段数不是 2–4 段。",
        "如 characters.lin-feng.location 或 characters.lin-feng.relationships.chen-lao。",
    ),
    op(
        "E_OP_ROOT",
        "path 的第一段不在允许的根之内。",
        "第一段只能是允许的根之一（characters、items、locations 等，消息里列全）。",
    ),
    op(
        "E_OP_SEGMENT",
        "path 中有一段不是 slug。",
        "每段只用小写英文、数字、- 或 _；中文名字写进 value。",
    ),
    op(
        "E_OP_VALUE",
        "op 缺少 value，或 value 的类型不对。",
        "补上 value。",
    ),
    op(
        "E_OP_INC_VALUE",
        "inc 的 value 不是有限数字，或结果溢出。",
        "inc 的 value 写数字增量，如 10 或 -5。",
    ),
    op(
        "E_OP_NOT_ARRAY",
        "add/remove 的目标不是数组。",
        "add/remove 只用于数组字段（如 inventory）；单值字段用 set。",
    ),
    op(
        "E_OP_TYPE_CONFLICT",
        "路径途经的字段不是对象，写不进去。",
        "换一条路径，或先用 set 把该字段改成对象。",
    ),
    op(
        "E_OP_DETAIL",
        "detail 不是字符串。",
        "detail 写一句中文说明。",
    ),
    op(
        "E_FORESHADOW_ID",
        "伏笔 id 不合法。",
        "用卷伏笔计划或 foreshadowing/global.json 里已有的 id（slug）。",
    ),
    op(
        "E_FORESHADOW_VALUE",
        "foreshadow 的 value 不是 planted/advanced/resolved。",
        "只用这三个值之一。",
    ),
    op(
        "E_FORESHADOW_CHAPTER",
        "第 0 章（开书前的初始状态）不能记录伏笔进展。",
        "伏笔在正文章节里埋设；开书前就有的写进卷伏笔计划。",
    ),
    op(
        "E_RETIRE_PATH",
        "整条目移除（退场、卷末清理）的 path 不是两段。",
        "写成 characters.lin-feng 这样的两段。",
    ),
    // --- context packets and outlines
    e(
        "E_CONTEXT_BUDGET",
        "必带的内容已超出这个 agent 的 token 预算，裁无可裁。",
        "novel context budget 查看各栏大小；精简大纲或设定，或在 novel.json 调高预算。",
    ),
    e(
        "E_OUTLINE_MISSING",
        "这一卷还没有大纲文件。",
        "先由大纲策划写出 volumes/vol-NN/outline.md。",
    ),
    e(
        "E_OUTLINE_UNREADABLE",
        "这一卷的大纲文件在，但读不出来（多半不是 UTF-8 编码）。",
        "把 volumes/vol-NN/outline.md 另存为 UTF-8 再重试。",
    ),
    e(
        "E_CHAPTER_PLAN",
        "要开始的这一章的计划有问题（大纲读不了、没有这一章或只有标题，或章节契约不合格式），chapter begin 拒绝开始。",
        "按消息里的文件与行改好（/novel:start → 调整大纲），novel validate 列出全部问题，再 chapter begin。",
    ),
    e(
        "E_OUTLINE_CHAPTER",
        "大纲里没有这一章。",
        "先给大纲补上这一章（/novel:start → 调整大纲）。",
    ),
    e(
        "E_OUTLINE_FORMAT",
        "大纲的格式读不了（章节标题或字段写法不对，消息给出行号）。",
        "按 docs/context-packets.md 的大纲格式修正该行。",
    ),
    e(
        "E_CHAPTER_TEXT",
        "读不了资料包需要的章节正文。",
        "检查 chapters/ 下对应文件是否存在、是否为 UTF-8。",
    ),
    // --- checks
    e(
        "E_LINT",
        "有文件未通过 AI 痕迹检查（黑名单、句式、重复超过阈值）。",
        "按 文件:行:列 逐条改写（润色编辑可据此修改）；确认无误的短语用 novel blacklist whitelist 加入白名单。",
    ),
    e(
        "E_CRAFT",
        "有章节没过章法检查：开篇前 300 字没有问题、章末没有钩子，或惊讶标记、比喻、「他知道，」超过上限。",
        "按 文件:行:列 逐条改：开篇让人物带着问题出场，章末停在没落地的事上，删掉多余的「忽然」「仿佛」；门槛在 novel.json 的 craft 里。",
    ),
    e(
        "E_LENGTH",
        "有章节的字数不在目标区间内。",
        "偏短的补写场景与动作，偏长的删减描写与重复对话；目标区间可在 novel.json 的 chapter_length 中调整。",
    ),
    e(
        "E_NAMES",
        "正文里有可疑人名（与已登记角色近似，或未登记）。",
        "逐条核对：笔误就改正文，新人物或别名就登记到 characters/。",
    ),
    e(
        "E_LEAK",
        "这一章出现了只属于其他故事线的实体（串线）。",
        "删去或改写；确需跨线的信息要有叙事机制，交汇章写进卷调度的 convergence_events。",
    ),
    e(
        "E_NO_STORYLINE",
        "不知道这一章属于哪条故事线。",
        "用 --storyline 指定，或在章节契约中写上 storyline_id。",
    ),
    e(
        "E_CONTINUITY",
        "章节契约之间有衔接错误。",
        "按每条的处理建议修改契约、补记状态，或在正文里写出过渡。",
    ),
    e(
        "E_NO_BASELINE",
        "没有可比较的风格基线。",
        "先用 novel style metrics 分析风格样章，由文风分析员写入 style-profile.json。",
    ),
    e(
        "E_NO_CHAPTER",
        "还没有可用的已提交章节。",
        "提交章节后再运行。",
    ),
    e(
        "E_EXPORT_ENCODING",
        "正文里有所选编码（GBK）表示不了的字，txt 没有导出（不会替换或丢掉任何字）。",
        "改用 --encoding gb18030 或默认的 UTF-8；或按列出的位置换掉这些字再导出。",
    ),
    e(
        "E_EXPORT_EPUB",
        "novel export 生成 EPUB 时出错（程序的缺陷，项目文件没有被改动）。",
        "先用 --format txt 或 md 导出，并把错误信息报告给插件维护者。",
    ),
    e(
        "E_STYLE_SET",
        "风格档案已经设置过或读不了，预置风格不会覆盖它。",
        "确认要换成预设就加 --force 重新运行（原文件会先备份到 state/backups/）。",
    ),
    e(
        "E_DUPLICATE",
        "这个短语已经在黑名单里。",
        "不必重复添加；要改类别先 remove 再 add。",
    ),
    e(
        "E_NOT_FOUND",
        "黑名单里没有这个短语。",
        "用 novel blacklist 的列表核对写法。",
    ),
    // --- quick start, volumes, reviews
    e(
        "E_QUICKSTART_EVIDENCE",
        "快速起步的这一步还没有对应的文件，不能标记完成。",
        "先写出消息里列出的文件，再 novel quickstart done。",
    ),
    e(
        "E_QUICKSTART_INCOMPLETE",
        "快速起步的前几步还没完成。",
        "novel quickstart 查看还差哪几步。",
    ),
    e(
        "E_VOLUME",
        "操作的卷不是当前卷。",
        "novel status 查看当前卷；按卷的顺序开卷、收卷。",
    ),
    e(
        "E_VOLUME_CHECK",
        "卷规划检查发现错误，不能开卷或收卷。",
        "按每条的处理建议让大纲策划修改大纲、调度、伏笔计划或契约，再重新检查。",
    ),
    e(
        "E_VOLUME_RANGE",
        "不知道这一卷从哪一章到哪一章。",
        "写 storyline-schedule.json 的 chapter_range 或大纲，或在 novel.json 设 chapters_per_volume。",
    ),
    e(
        "E_REVIEW_MISSING",
        "卷末回顾的报告还没有写，不能收卷。",
        "先运行 novel review volume。",
    ),
    e(
        "E_NO_CLEANUP_REPORT",
        "还没有卷末清理建议，无从清理。",
        "先 novel volume close 生成清理建议。",
    ),
    // --- spec propagation, pending actions, retirement
    e(
        "E_SNAPSHOT_EXISTS",
        "已经有一份设定快照在等待传播。",
        "先完成这次更新设定（novel spec propagate），或按提示丢弃旧快照。",
    ),
    e(
        "E_NO_SNAPSHOT",
        "没有设定快照，无法比较改了什么。",
        "更新设定前先 novel spec snapshot。",
    ),
    e(
        "E_PENDING_NOT_FOUND",
        "待处理事项里没有这个 id。",
        "novel pending list 查看现有的 id。",
    ),
    e(
        "E_UNKNOWN_CHARACTER",
        "characters/active/ 里没有这个角色。",
        "检查 slug；已退场的角色在 characters/retired/。",
    ),
    e("E_ALREADY_RETIRED", "这个角色已经退场。", "不必重复退场。"),
    e(
        "E_RETIRE_BLOCKED",
        "退场保护拦下了：角色还有未回收的伏笔、在活跃故事线上或在交汇事件里。",
        "按列出的理由先处理（回收伏笔、调整故事线），或作者确认后强制退场。",
    ),
    // --- revision candidates, preferences (`004`)
    e(
        "E_NO_REVISION_NOTES",
        "这一轮没有带修订指令的意见：不保存修订候选，章节保持不变。",
        "novel revision notes 查看意见；没有意见就照常继续。",
    ),
    e(
        "E_REVISION_SAME",
        "修订候选与章节现在的正文一字不差。",
        "候选应是按修订意见改过的整章。",
    ),
    e(
        "E_NO_REVISION",
        "这一章没有修订候选。",
        "先按意见生成修订稿，再 novel revision save --chapter N 文件。",
    ),
    e(
        "E_REVISION_LIMIT",
        "这一章作者决定的修订或重写已到 novel.json 的 gate.max_author_revisions 次。",
        "接受现稿（chapter commit --accept），或作者亲手改好后接受；要再改，先提高 gate.max_author_revisions。",
    ),
    e(
        "E_REVISION_DECIDED",
        "修订候选已经被采纳或拒绝。",
        "要再修订，重新生成修订稿并 novel revision save。",
    ),
    e(
        "E_REVISION_STALE",
        "章节正文在候选生成之后改过，候选已过时。",
        "按现在的正文重新生成修订稿并保存，或 novel revision reject。",
    ),
    e(
        "E_PREF_EXISTS",
        "已经有一模一样的作者偏好。",
        "不必重复添加；要改写就先 novel prefs remove ID 再添加。",
    ),
    e(
        "E_NO_PREFERENCE",
        "没有这个 id 的作者偏好。",
        "novel prefs list 查看现有的偏好。",
    ),
    // --- importing a manuscript (`novel import`)
    e(
        "E_IMPORT_ORDER",
        "书稿的章号有缺章、重号或顺序颠倒（或没有接上项目的最后一章），没有导入任何内容；data 给出完整的分章表与问题，缺章时还指出像缺的标题、却读成了正文的行。",
        "修正书稿里的章号后重新导入，或加 --renumber 按出现顺序重新编号；书稿是全书后一部分时加 --start N。",
    ),
    e(
        "E_IMPORT_EMPTY",
        "书稿中有没有正文、后面又出现一次的章节：常见于开头的目录被当成了章节，没有导入任何内容（只空着一章、不重复的，照样导入为空章并给出警告）。",
        "删去书稿开头的目录（或目录前后的书名、简介行）后重新导入。",
    ),
    f(
        "E_CHAPTER_EMPTY",
        "这一章没有正文（导入时就是空的），章号保留着。",
        "补写这一章（改 chapters/ 下的文件），写好后这条提示就不再出现。",
    ),
    e(
        "E_IMPORT_VOLUME",
        "书稿的卷号倒退，或新章节所在的卷早于项目当前的卷，没有导入任何内容。",
        "让卷标题逐卷递增，且不早于项目当前的卷，再重新导入。",
    ),
    e(
        "E_IMPORT_SOURCE",
        "给出的书稿读不了：文件夹里没有 .txt 或 .md 文件，给的不是普通文件（设备、管道），或超过导入的上限 64 MiB。",
        "给出一个 .txt/.md 文件，或放着章节文件的文件夹；太大的书稿按卷拆开，依次导入。",
    ),
    e(
        "E_IMPORT_ENCODING",
        "认不出书稿的编码，或书稿里有坏字节、替换字符「\u{fffd}」、控制字符，没有导入任何内容；data.attempts 列出试过的编码各在第几行第几列（第几字节）读不下去。",
        "把书稿另存为 UTF-8 后重新导入；确知编码时加 --encoding；接受把坏字节换成「\u{fffd}」时加 --lossy（会报告个数）。",
    ),
    e(
        "E_IMPORT_NO_CHAPTERS",
        "书稿里没有认出任何章节标题，没有导入任何内容；消息里给出书稿开头几行。",
        "章节标题要单独占一行，如「第12章 标题」「第十二回 标题」「Chapter 12」；一章一个文件时，文件名写章号。",
    ),
    e(
        "E_IMPORT_HEADING",
        "书稿里有像章节标题、却读不出章号的行（第一亿章、第-1章、第4294967296章），没有导入任何内容。",
        "把章号改成 1 以上的整数（12 或 十二）；本来就不是标题的，改写这一行的开头。",
    ),
    e(
        "E_IMPORT_NUMBER",
        "书稿的章号超出项目能容纳的范围（最大 99999），没有导入任何内容。",
        "把书稿拆开，或检查是不是把别的数字当成了章号。",
    ),
    e(
        "E_IMPORT_CHANGED",
        "分章之后、写入之前，项目的最后完成章节变了（另一个会话提交了章节）。",
        "重新运行导入命令。",
    ),
    e(
        "E_NO_BACKFILL",
        "没有待补全的导入章节（断点中没有 import-backfill 待处理事项）。",
        "导入书稿后才需要补全；novel pending list 查看待处理事项。",
    ),
    e(
        "E_BACKFILL_PENDING",
        "导入的章节还没有补全摘要与状态，不能开始新的一章：新章的状态增量必须接在它们之后。",
        "先用 /novel:start 选「补全导入的章节」补完（补不了的章用 novel ops skip 跳过状态），再续写新章。",
    ),
    e(
        "E_BACKFILL_ORDER",
        "标记补全的章节不是下一个待补全的章节：补全按章节顺序进行。",
        "novel import backfill 查看下一章，先补它。",
    ),
    e(
        "E_BACKFILL_INCOMPLETE",
        "这一章还缺摘要，或变更日志里还没有这一章（状态增量未合并也未记为跳过）。",
        "写好 summaries/ 下的摘要，用 novel ops apply 合并状态增量（或 novel ops skip），再标记。",
    ),
    // --- findings of validate and status
    f(
        "E_MISSING",
        "缺少必需的文件。",
        "按提示里的恢复方法补回，或从模板复制。",
    ),
    f(
        "E_UNKNOWN_FILE",
        "未识别的 JSON 文件（不在项目约定的位置），未做校验。",
        "确认是有意放的；否则移到约定位置或删去。",
    ),
    f(
        "E_FILE_NAME",
        "文件名与文件里的 id 或 chapter 字段不一致。",
        "改文件名或字段，让两者一致。",
    ),
    f(
        "E_DUPLICATE_ID",
        "同一个 id 出现了不止一次。",
        "给重复的条目换一个 id。",
    ),
    f(
        "E_SLUG",
        "id 不是 slug。",
        "id 只用小写英文、数字、- 或 _。",
    ),
    f(
        "E_RANGE",
        "章节范围不合法（起点大于终点或越界）。",
        "改成 [起, 止]，起点不大于终点。",
    ),
    f(
        "E_REF_STORYLINE",
        "引用了不存在的故事线。",
        "在 storylines/storylines.json 里登记，或改成已有的故事线 id。",
    ),
    f(
        "E_REF_SPEC",
        "引用了不存在的规范（W-/C-/LS- 编号）。",
        "改成已有的编号，或先把规范写进对应文件。",
    ),
    f(
        "E_STORYLINE_TYPE",
        "故事线类型不在 storyline_types 之内。",
        "改用列出的类型之一。",
    ),
    f(
        "E_WEIGHTS",
        "评估 8 个维度的权重之和不是 1。",
        "按 novel.json 的 gate.weights 重写 weight。",
    ),
    f(
        "E_EVAL_QUOTE",
        "评估的 evidence 引文在被评的正文里找不到（空白与引号不计）。",
        "从正文复制原句，多处用「……」隔开；引不出原文的判断写进 reason 或 detail。",
    ),
    f(
        "E_EVAL_HIDDEN",
        "核查行记为高置信违规，violations 里却没有它（或不是 high）：门控只读 violations。",
        "把它写进 violations（confidence high，附原文）并配 blocking 的修订指令；不确凿就把这一行改为 medium。",
    ),
    f(
        "E_EVAL_OBJECTIVE",
        "章节契约的必须目标（或本章兑现的爽点 PAYOFF-NNN）在 l3_checks 里没有核查行。",
        "每个必须目标、本章兑现的爽点各写一行 {id, status, confidence, detail}。",
    ),
    f(
        "E_EVAL_FIXES",
        "评估把这一章退回（建议 revise/pause/rewrite、重算总分低于 gate.polish 或有高置信违规），required_fixes 却是空的。",
        "给出 3–6 条定位到段落的修订指令，高置信违规的那条标 blocking。",
    ),
    f(
        "E_EVAL_FIX_REVIEW",
        "修订后的一轮评审没有逐条判定上一轮的修订指令（F1、F2…），或判为做到却没引正文。",
        "fix_review 每条写 {fix, status: done|partly|not_done, evidence}。",
    ),
    f(
        "E_EVAL_FRAGMENT",
        "评估的引文只是几个字（人名、词语），不足 gate.quote_min_chars（默认 8）字又不是正文里完整的一句；或某个维度没有引正文。",
        "引出包含它的整句，或至少 gate.quote_min_chars 个字的一段原文。",
    ),
    f(
        "E_EVAL_REUSED",
        "同一段引文是三个或更多维度的证据。",
        "每个维度引它自己的依据。",
    ),
    f(
        "E_EVAL_TARGET",
        "修订指令的 target 里引号中的字在正文里找不到。",
        "target 里的引文从正文原样复制；说不出原文就只写段落号。",
    ),
    f(
        "E_EVAL_VERDICT",
        "评估的建议（recommendation）与按项目权重重算的总分、门控门槛对不上（或有高置信违规却建议通过）。",
        "按 gate 的门槛从分数推出建议：有高置信违规写 revise；分数与判断不符就改分数的依据，不改门槛。",
    ),
    f(
        "E_EVAL_STALE",
        "修订轮里判为做到（done/partly）的修订指令，引的原文上一轮被退回的稿子里原样就有：证明不了改过。",
        "引这一轮改出来的句子；找不到就判 not_done。",
    ),
    f(
        "E_STYLE_EXEMPLARS",
        "风格指纹的作者原文示例（voice_exemplars）超过 5 段或合计超过 2000 token。",
        "留 3–5 段最有代表性的，每段一两百字。",
    ),
    f(
        "E_OUTLINE",
        "卷大纲有一行读不了。",
        "按 docs/context-packets.md 的大纲格式修正该行。",
    ),
    f(
        "E_OUTLINE_EMPTY",
        "卷大纲里没有任何章节块。",
        "让 PlotArchitect 按「## 第48章 标题」的格式写出本卷各章。",
    ),
];

/// The row of `code`.
pub fn lookup(code: &str) -> Option<&'static CodeDoc> {
    CODES.iter().find(|c| c.code == code)
}

/// `docs/errors.md`: the table as Markdown (generated; a test keeps the file in step).
pub fn markdown() -> String {
    let mut out = String::from(
        "# 错误与检查代码\n\n\
         本文件由 `crates/novel-core/src/codes.rs` 生成，请改那里（运行 \
         `NOVEL_BLESS=1 cargo test -p novel-cli --test runner errors_doc` 重新生成）。\n\n\
         `--json` 输出里失败的命令带 `error.code`；检查类报告的每条发现、被拒的 op 也各带一个代码。\n\
         退出码：0 成功；1 检查发现问题；2 用法或项目错误；3 冲突（锁、版本、章节顺序）。\n\n\
         | 代码 | 类别 | 含义 | 怎么办 |\n|---|---|---|---|\n",
    );
    for c in CODES {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            c.code,
            c.kind.label_zh(),
            c.meaning.replace('|', "\\|"),
            c.hint.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_listed_once_with_a_meaning_and_a_hint() {
        let mut seen = std::collections::BTreeSet::new();
        for c in CODES {
            assert!(seen.insert(c.code), "{} listed twice", c.code);
            assert!(c.code.starts_with("E_"), "{}", c.code);
            assert!(!c.meaning.is_empty() && !c.hint.is_empty(), "{}", c.code);
        }
        assert_eq!(lookup("E_JOURNAL").map(|c| c.kind), Some(CodeKind::Error));
        assert!(lookup("E_NOPE").is_none());
    }
}
