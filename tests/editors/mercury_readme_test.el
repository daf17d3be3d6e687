;;; mercury_readme_test.el --- editors/emacs/README.md as a user follows it (tests/editors/test_emacs.py)  -*- lexical-binding: t; -*-

;; Environment: MERCURY_SNIPPET (the README's set-up block, as a file), MERCURY_KEYS (JSON: the
;; README's key rows, [[key, command], ...]), MERCURY_SERVER_CMD (JSON array: the tests' server),
;; MERCURY_DEMO (a Python file with many completion points), MERCURY_AREA (the rename example).
;; Prints "PASS <name>" per check; exits 1 on failure.

(require 'cl-lib)
(require 'json)
(load (expand-file-name "mt.el" (file-name-directory load-file-name)) nil t)

(load (getenv "MERCURY_SNIPPET") nil t)   ; the README's snippet, as written
(setq mercury-server-command (json-parse-string (getenv "MERCURY_SERVER_CMD") :array-type 'list))
(setq mercury-settings '(:syntaxGuard "off" :maxTokens 16))  ; the tests' tiny model: short, unguarded
(setq eglot-send-changes-idle-time 0)
(defvar mt-keys (json-parse-string (getenv "MERCURY_KEYS") :array-type 'list))

(defun mt-command (key)
  (intern (cadr (assoc key mt-keys))))

(defun mt-press (key)
  "Press KEY as a user would (through the keymaps), checking it runs the README's command."
  (mt-check (format "%s runs %s" key (mt-command key)) (eq (key-binding (kbd key)) (mt-command key))
            (format "%S" (key-binding (kbd key))))
  (execute-kbd-macro (kbd key)))

;; Open a file as a user does: the hook's eglot-ensure connects after the first command (batch
;; Emacs runs none, so run the hook it waits on).
(find-file (getenv "MERCURY_DEMO"))
(python-mode)
(run-hooks 'post-command-hook)
(mt-check "eglot started by the hook" (mt-wait (lambda () (eglot-current-server)) 60))
(mt-check "ready" (mt-wait (lambda () (equal mercury-status "ready")) 120))
(mt-check "mercury-mode on" mercury-mode)

;; The word and the line keys: what they insert is the next word / the line of the suggestion.
(defun mt-find-suggestion ()
  "Move to the end of a line with a suggestion; return what it adds there."
  (let ((found nil))
    (goto-char (point-min))
    (while (and (not found) (not (eobp)))
      (end-of-line)
      (let* ((item (and (> (current-column) 0) (mercury--suggestion)))
             (rest (and item (mercury--rest item))))
        (if (and rest (string-match-p "\\`[^\n]*[[:alnum:]_][^\n]*[^[:alnum:]_\n]" rest))
            (setq found rest)
          (forward-line 1))))
    found))

(let* ((rest (mt-find-suggestion))
       (start (point)))
  (mt-check "a suggestion" rest)
  (string-match "\\`[ \t]*\\(?:[[:alnum:]_]+\\|[^[:alnum:]_[:space:]]+\\)" rest)
  (let ((word (match-string 0 rest)))
    (mt-press "C-c m w")
    (mt-check "C-c m w inserts the next word" (equal (buffer-substring start (point)) word)
              (format "%S, wanted %S of %S" (buffer-substring start (point)) word rest))))
(let* ((rest (mt-find-suggestion))
       (start (point))
       (line (car (split-string rest "\n"))))
  (mt-press "C-c m l")
  (mt-check "C-c m l inserts the line" (equal (buffer-substring start (point)) line)
            (format "%S, wanted %S" (buffer-substring start (point)) line)))
(let ((before (progn (mt-find-suggestion) (thing-at-point 'line t))))
  (mt-press "C-c m c")
  (mt-check "C-c m c inserts the confident part" (not (equal (thing-at-point 'line t) before))))

;; Next edit: C-c m n previews, TAB (while previewing) jumps and accepts, C-g dismisses, C-c m a
;; applies every edit at once.
(find-file (getenv "MERCURY_AREA"))
(python-mode)
(run-hooks 'post-command-hook)
(mt-check "managed" (mt-wait (lambda () (and (eglot-current-server) mercury-mode)) 60))
(defun mt-rename (old new)
  (goto-char (point-min)) (search-forward old) (replace-match new))
(mt-rename "width" "w")
(mt-press "C-c m n")
(mt-check "C-c m n previews the edits" (and mercury-next-edit-preview-mode (= (length mercury--overlays) 2)))
(dotimes (_ 4) (mt-press "TAB"))
(mt-check "TAB jumps and accepts"
          (equal (buffer-string) "def area(w, height):\n    total = w * height\n    return total + w\n") (buffer-string))
(mt-rename "w," "size,")
(mt-press "C-c m n")
(mt-check "a second preview" mercury-next-edit-preview-mode)
(mt-press "C-g")
(mt-check "C-g dismisses, leaving the buffer"
          (and (not mercury-next-edit-preview-mode) (null mercury--overlays)
               (equal (buffer-string) "def area(size, height):\n    total = w * height\n    return total + w\n")))
(mt-press "C-c m a")
(mt-check "C-c m a applies them all"
          (equal (buffer-string) "def area(size, height):\n    total = size * height\n    return total + size\n")
          (buffer-string))
(dolist (row mt-keys)
  (unless (member (car row) '("TAB" "C-g" "C-c m w" "C-c m l" "C-c m c" "C-c m n" "C-c m a"))
    (mt-check (format "%s is tested" (car row)) nil)))
(eglot-shutdown (eglot-current-server))
(kill-emacs 0)
