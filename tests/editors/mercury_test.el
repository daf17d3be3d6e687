;;; mercury_test.el --- drives editors/emacs/mercury.el in batch Emacs (tests/editors/test_emacs.py)  -*- lexical-binding: t; -*-

;; Environment: MERCURY_SERVER_CMD (JSON array), MERCURY_DEMO (a Python file with many completion
;; points), MERCURY_AREA (the rename example); MERCURY_START_UP_ONLY: the default settings, and
;; only the start-up checks.  Prints "PASS <name>" per check; exits 1 on failure.

(require 'cl-lib)
(require 'json)
(load (expand-file-name "mt.el" (file-name-directory load-file-name)) nil t)
(require 'mercury)

(setq mercury-server-command (json-parse-string (getenv "MERCURY_SERVER_CMD") :array-type 'list))
(unless (getenv "MERCURY_START_UP_ONLY")
  (setq mercury-settings '(:syntaxGuard "off" :maxTokens 16)))  ; the tests' tiny model: short, unguarded
(setq eglot-send-changes-idle-time 0)
(mercury-eglot-setup)

;; Start-up, as the README says: eglot in a Python buffer.
(find-file (getenv "MERCURY_DEMO"))
(python-mode)
(apply #'eglot (eglot--guess-contact))
(mt-check "ready" (mt-wait (lambda () (equal mercury-status "ready")) 120))
(jsonrpc-request (eglot-current-server) :mercury/stats nil) ; earlier server messages are in by now
(mt-check "silent start-up"
          (not (string-match-p "Server reports\\|unknown notification\\|invalid settings\\|\\[eglot\\].*[Ee]rror"
                               (mt-messages))))
(when (getenv "MERCURY_START_UP_ONLY")
  (eglot-shutdown (eglot-current-server))
  (kill-emacs 0))
;; Cross-file next edit (MERCURY_USES: a workspace file that is not open; the demo file is
;; shapes.py): renaming `area' at its definition previews shapes.py's call at once; the update
;; brings uses.py's two edits; TAB visits them all, opening uses.py.
(when (getenv "MERCURY_USES")
  (goto-char (point-min))
  (search-forward "area")
  (replace-match "surface")
  (let ((n (mercury-next-edit)))
    (mt-check "the open document's edit at once" (= n 1) (format "%d" n)))
  (mt-check "update merged" (mt-wait (lambda () (= (mercury--unloaded-count) 2)) 60)
            (format "%S" mercury--session))
  (mt-check "not visited yet" (null (find-buffer-visiting (getenv "MERCURY_USES"))))
  (let ((before (mercury--count))
        (edit (list :uri (mercury--buffer-uri) :newText "x" :oldText "def" :confidence 1 :reason "test"
                    :documentVersion :null
                    :range '(:start (:line 0 :character 0) :end (:line 0 :character 3)))))
    (dolist (stale (list (list :uri (mercury--buffer-uri) :version 0)                  ; an older request
                         (list :uri "file:///elsewhere.py" :version (plist-get mercury--session :version))))
      (eglot-handle-notification (eglot-current-server) 'mercury/nextEditUpdate
                                 :textDocument stale :update 2 :result (list :edits (vector edit))))
    (mt-check "stale updates dropped" (= (mercury--count) before) (format "%d" (mercury--count))))
  (let ((steps nil))
    (dotimes (_ 6)
      (mercury-next-edit-accept)
      (push (list (file-name-nondirectory buffer-file-name) (line-number-at-pos) (current-column)) steps))
    (mt-check "TAB visits every file"
              (equal (nreverse steps) '(("shapes.py" 6 11) ("shapes.py" 6 18) ("uses.py" 1 19)
                                        ("uses.py" 1 26) ("uses.py" 5 15) ("uses.py" 5 22)))
              (format "%S" steps)))
  (mt-check "uses.py renamed"
            (equal (buffer-string)
                   "from shapes import surface\n\n\ndef total(rects):\n    return sum(surface(w, h) for w, h in rects)\n")
            (buffer-string))
  (mt-check "shapes.py renamed"
            (string-match-p "return surface(side, side)"
                            (with-current-buffer (find-buffer-visiting (getenv "MERCURY_DEMO")) (buffer-string))))
  (mt-check "preview closed" (and (null mercury--session) (zerop (mercury--count))))
  (mt-check "no errors" (not (string-match-p "Server reports (type=1)\\|\\[eglot\\].*[Ee]rror" (mt-messages))))
  (eglot-shutdown (eglot-current-server))
  (kill-emacs 0))
(mercury-mode 1)
(mt-check "mode line" (equal (mercury-mode-line) " mercury"))

;; Completion at point: the server's suggestion in the completion table; completing inserts it.
(let ((found nil))
  (goto-char (point-min))
  (while (and (not found) (not (eobp)))
    (end-of-line)
    (when (> (current-column) 0)
      (let* ((capf (eglot-completion-at-point))
             (cands (and capf (all-completions (buffer-substring (nth 0 capf) (nth 1 capf)) (nth 2 capf)))))
        (when cands (setq found (list (line-number-at-pos) (thing-at-point 'line t) (car cands))))))
    (forward-line 1))
  (mt-check "completion candidates" found)
  (let* ((before (nth 1 found)))
    (goto-char (point-min)) (forward-line (1- (car found))) (end-of-line)
    (let ((completion-auto-help nil) (completion-styles '(basic partial-completion emacs22)))
      (completion-at-point))
    (mt-check "completion inserted" (not (equal (thing-at-point 'line t) before))
              (format "line still %S (candidate %S)" before (nth 2 found)))))

;; The confident part: the server's confidentText replaces the line, the rest of the line kept
;; after point (an item as the server writes it), then a real round trip inserts a suggestion.
(with-temp-buffer
  (insert "total = compute()\n")
  (goto-char 17)                        ; between the parentheses
  (mercury--insert-item '(:insertText "total = compute(values, k)"
                          :range (:start (:line 0 :character 0) :end (:line 0 :character 17))
                          :command (:command "mercury.accepted"
                                    :arguments [(:confidentText "total = compute(values, )")])))
  (mt-check "confident part inserted" (equal (buffer-string) "total = compute(values, )\n") (buffer-string))
  (mt-check "point before the rest of the line" (looking-at-p ")\n") (format "%d" (point))))
(let ((done nil) (before (plist-get (plist-get (jsonrpc-request (eglot-current-server) :mercury/stats nil)
                                               :counters) :accepted)))
  (goto-char (point-min))
  (while (and (not done) (not (eobp)))
    (end-of-line)
    (let ((line (thing-at-point 'line t)))
      (when (and (> (current-column) 0) (mercury-complete-confident))
        (setq done (cons line (thing-at-point 'line t)))))
    (forward-line 1))
  (mt-check "confident round trip" (and done (not (equal (car done) (cdr done)))
                                       (string-prefix-p (string-trim-right (car done)) (cdr done)))
            (format "%S" done))
  (mt-check "counted as accepted"
            (equal (plist-get (plist-get (jsonrpc-request (eglot-current-server) :mercury/stats nil) :counters)
                              :accepted)
                   (1+ before))))

;; Next edit: rename the parameter at its definition; TAB jumps to each use, then accepts it.
(find-file (getenv "MERCURY_AREA"))
(python-mode)
(mt-check "managed" (mt-wait (lambda () (eglot-current-server)) 30))
(goto-char (point-min))
(search-forward "width")
(replace-match "w")
(let ((n (mercury-next-edit)))
  (mt-check "two predicted edits" (= n 2) (format "%d" n)))
(mt-check "preview" (and mercury-next-edit-preview-mode
                         (equal (mapcar (lambda (ov) (overlay-get ov 'after-string)) mercury--overlays) '("w" "w"))))
(let ((lines nil))
  (dotimes (_ 4)
    (mercury-next-edit-accept)
    (push (line-number-at-pos) lines))
  (mt-check "jumps and accepts" (equal (nreverse lines) '(2 2 3 3))))
(mt-check "renamed" (equal (buffer-string)
                           "def area(w, height):\n    total = w * height\n    return total + w\n")
          (buffer-string))
(mt-check "preview closed" (and (null mercury--overlays) (not mercury-next-edit-preview-mode)))

;; The same through eglot's code action, all at once, in a fresh copy of the file with area.py
;; still open.  Batch Emacs never idles, so eglot's idle timer has not sent area.py's accepted
;; edits yet: send them as that timer would.  The action then covers area2.py alone, and every
;; document in it carries the version the editor last sent for it.
(let ((area (current-buffer)))
  (with-current-buffer area (eglot--signal-textDocument/didChange))
  (find-file (getenv "MERCURY_AREA2"))
  (python-mode)
  (mt-check "managed again" (mt-wait (lambda () (eglot-current-server)) 30))
  (goto-char (point-min))
  (search-forward "width")
  (replace-match "w")
  (eglot--signal-textDocument/didChange)
  (let* ((actions (eglot-code-actions (point) nil "refactor.rewrite"))
         (changes (append (plist-get (plist-get (car actions) :edit) :documentChanges) nil))
         (sent (lambda (uri)
                 (with-current-buffer (if (string-suffix-p "/area.py" uri) area (current-buffer))
                   eglot--versioned-identifier))))
    (mt-check "versioned per document"
              (and changes (cl-every (lambda (c) (let ((doc (plist-get c :textDocument)))
                                                   (equal (plist-get doc :version) (funcall sent (plist-get doc :uri)))))
                                     changes))
              (format "%S" changes))
    (mt-check "only the renamed document"
              (equal (mapcar (lambda (c) (file-name-nondirectory (plist-get (plist-get c :textDocument) :uri))) changes)
                     '("area2.py"))
              (format "%S" changes))))
(mt-check "code action" (string-prefix-p "Apply predicted edits" (or (mercury-apply-predicted-edits) "")))
(mt-check "renamed by the code action"
          (equal (buffer-string) "def area(w, height):\n    total = w * height\n    return total + w\n")
          (buffer-string))
(mt-check "no errors" (not (string-match-p "Server reports (type=1)\\|\\[eglot\\].*[Ee]rror" (mt-messages))))
(eglot-shutdown (eglot-current-server))
(kill-emacs 0)
