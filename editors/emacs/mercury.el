;;; mercury.el --- mercury-lsp through eglot: completions and next-edit previews  -*- lexical-binding: t; -*-

;; Version: 0.2.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; License: Apache-2.0

;;; Commentary:

;; Registers mercury-lsp (a local completion daemon on a diffusion language model) with eglot.
;; Emacs has no LSP ghost text: suggestions come through `completion-at-point' (the server's
;; completion fallback for clients without inline completion).
;;
;; Next edit: after a change (e.g. renaming a parameter), `M-x mercury-next-edit' (C-c m n in
;; `mercury-mode') asks the server for the edits that follow and previews them (old text struck
;; through, new text after it).  TAB jumps to the next one, then accepts it; C-g dismisses them.
;; The edits of workspace files that are not open arrive afterwards (`mercury/nextEditUpdate')
;; and join the preview; after a buffer's last edit TAB opens the next file.
;; `M-x mercury-apply-predicted-edits' applies them all at once through eglot's code action
;; "Apply predicted edits" (also offered by `eglot-code-actions').
;;
;; Confident part: `M-x mercury-complete-confident' (C-c m c) inserts the suggestion at point up
;; to the model's first low-confidence token (the server's per-token confidences); C-c m w and
;; C-c m l insert its next word and its next line.
;;
;;   (add-to-list 'load-path (string-trim (shell-command-to-string "mercury-lsp editors emacs")))
;;   (require 'mercury)
;;   (mercury-eglot-setup)                        ; also turns on `mercury-mode' (the C-c m keys)
;;   (add-hook 'python-mode-hook #'eglot-ensure)

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'jsonrpc)

(defgroup mercury nil "mercury-lsp through eglot." :group 'eglot :prefix "mercury-")

(defcustom mercury-server-command '("mercury-lsp" "serve")
  "Command (program and arguments) that starts mercury-lsp on stdio."
  :type '(repeat string))

(defcustom mercury-modes
  '(python-mode python-ts-mode js-mode js-ts-mode typescript-mode typescript-ts-mode go-mode
    go-ts-mode rust-mode rust-ts-mode java-mode c-mode c-ts-mode c++-mode c++-ts-mode lua-mode sh-mode)
  "Major modes whose buffers use mercury-lsp."
  :type '(repeat symbol))

(defcustom mercury-settings nil
  "Server settings (mercury_lsp/config.py), e.g. (:preset \"fast\").
Keys are camelCase keywords.  Sent as initializationOptions;
nil: the server's defaults."
  :type 'plist)

(defface mercury-next-edit-old '((t :strike-through t :inherit error))
  "Text a predicted edit replaces.")
(defface mercury-next-edit-new '((t :inherit success :weight bold))
  "Text a predicted edit inserts.")

(defvar mercury-status nil "Model state reported by mercury-lsp: loading, ready or error.")
(defvar mercury-status-message "" "The message of the last `mercury/status' notification.")

(defun mercury--contact (&optional _interactive)
  "The eglot contact for mercury-lsp.
`mercury-settings' are its initializationOptions."
  (append mercury-server-command
          (list :initializationOptions (or mercury-settings eglot--{}))))

;;;###autoload
(defun mercury-eglot-setup ()
  "Make eglot start mercury-lsp for `mercury-modes'.
Buffers eglot manages with mercury-lsp get `mercury-mode' (its keys)."
  (setq eglot-server-programs
        (cons (cons mercury-modes #'mercury--contact)
              (cl-remove #'mercury--contact eglot-server-programs :key #'cdr)))
  (add-hook 'eglot-managed-mode-hook #'mercury--managed))

(defun mercury--managed ()
  "Turn `mercury-mode' on in a buffer eglot manages with mercury-lsp.
Off again when eglot stops managing it."
  (let ((server (and (eglot-managed-p) (eglot-current-server))))
    (mercury-mode (if (and server (equal (plist-get (eglot--server-info server) :name) "mercury-lsp")) 1 -1))))

(cl-defmethod eglot-handle-notification
  (_server (_method (eql mercury/status)) &key state message &allow-other-keys)
  "Keep the model state for the mode line; report a load failure."
  (setq mercury-status state mercury-status-message (or message ""))
  (when (equal state "error")
    (message "mercury-lsp: could not load the model: %s" message))
  (force-mode-line-update t))

(defun mercury-mode-line ()
  "A mode-line string: mercury, mercury:loading or mercury:error."
  (cond ((null mercury-status) "")
        ((equal mercury-status "ready") " mercury")
        (t (format " mercury:%s" mercury-status))))

;;; The confident part of a suggestion

(defun mercury--insert-item (item)
  "Insert inline-completion ITEM's confident part, else all of it.
ITEM replaces its range (the cursor's line); the text after point in
that range stays after point.  Returns the inserted text."
  (let* ((region (eglot--range-region (plist-get item :range)))
         (arg (car (append (plist-get (plist-get item :command) :arguments) nil)))
         (text (or (and (listp arg) (plist-get arg :confidentText)) (plist-get item :insertText)))
         (rest (- (cdr region) (max (point) (car region)))))
    (goto-char (car region))
    (delete-region (car region) (cdr region))
    (insert text)
    (backward-char (min rest (length text)))
    text))

(defun mercury--suggestion ()
  "The server's inline completion at point, or nil.
An InlineCompletionItem plist."
  (eglot--signal-textDocument/didChange)
  (let ((result (jsonrpc-request (mercury--server) :textDocument/inlineCompletion
                                 (list :textDocument (eglot--TextDocumentIdentifier)
                                       :position (eglot--pos-to-lsp-position)
                                       :context (list :triggerKind 1)))))
    (car (append (plist-get result :items) nil))))

(defun mercury--rest (item)
  "What ITEM adds at point: its text past the part of it typed already, or nil."
  (let* ((region (and (plist-get item :range) (eglot--range-region (plist-get item :range))))
         (typed (if region (buffer-substring-no-properties (car region) (max (car region) (point))) ""))
         (text (plist-get item :insertText)))
    (and (stringp text) (string-prefix-p typed text) (substring text (length typed)))))

(defun mercury--next-word (s)
  "The next word of S, its leading blanks included.
When S starts with a line break: that and the indent after it."
  (cond ((string-match "\\`\n[ \t]*" s) (match-string 0 s))
        ((string-match "\\`[ \t]*\\(?:[[:alnum:]_]+\\|[^[:alnum:]_[:space:]]+\\)" s) (match-string 0 s))
        (t s)))

(defun mercury--next-line (s)
  "S up to its first line break.
When S starts with a line break: that and the next line."
  (if (string-match "\\`\n[^\n]*" s) (match-string 0 s)
    (car (split-string s "\n"))))

(defun mercury--complete-part (take)
  "Insert the part TAKE picks of the suggestion at point, and tell the server.
Returns the inserted text, or nil."
  (let* ((item (mercury--suggestion))
         (rest (and item (mercury--rest item)))
         (part (and rest (not (string-empty-p rest)) (funcall take rest))))
    (if (not part)
        (progn (when (called-interactively-p 'any) (message "mercury: no suggestion here")) nil)
      (insert part)
      (jsonrpc-request (mercury--server) :workspace/executeCommand
                       (list :command "mercury.accepted"
                             :arguments (vector (list :partial (if (equal part rest) :json-false t)))))
      part)))

(defun mercury-complete-word ()
  "Insert the next word of the suggestion at point."
  (interactive)
  (mercury--complete-part #'mercury--next-word))

(defun mercury-complete-line ()
  "Insert the suggestion at point up to the end of its line."
  (interactive)
  (mercury--complete-part #'mercury--next-line))

(defun mercury-complete-confident ()
  "Insert the suggestion at point up to the model's first low-confidence token.
The server cuts it there (setting `minTokenConfidence', default 0.5);
a suggestion with no such token is inserted whole."
  (interactive)
  (eglot--signal-textDocument/didChange)
  (let* ((server (mercury--server))
         (result (jsonrpc-request server :textDocument/inlineCompletion
                                  (list :textDocument (eglot--TextDocumentIdentifier)
                                        :position (eglot--pos-to-lsp-position)
                                        :context (list :triggerKind 1))))
         (item (car (append (plist-get result :items) nil))))
    (if (null item)
        (progn (when (called-interactively-p 'interactive) (message "mercury: no suggestion here")) nil)
      (let* ((arg (car (append (plist-get (plist-get item :command) :arguments) nil)))
             (partial (and (listp arg) (plist-get arg :confidentText) t))
             (text (mercury--insert-item item)))
        (jsonrpc-request server :workspace/executeCommand
                         (list :command "mercury.accepted"
                               :arguments (vector (list :partial (if partial t :json-false)))))
        text))))

;;; Next edit
;;
;; The answer of `mercury/nextEdit' has the open documents' edits; with `updatePending' one
;; `mercury/nextEditUpdate' follows from the background with the edits of workspace files that
;; are not open.  It is merged only into the request it answers (same document, same version):
;; edits of files visited in a buffer get overlays there, the others wait until TAB opens their
;; file (checked there against the text they replace).  After a buffer's last edit TAB goes on to
;; the next file.

(defconst mercury--cross-file-update 2
  "The `update' number of the workspace files' part of a next-edit answer.
The answer itself is part 1.")

(defvar-local mercury--overlays nil "Overlays of the pending predicted edits, in buffer order.")
(defvar-local mercury--tick nil "`buffer-chars-modified-tick' the pending edits are valid for.")

(defvar mercury--session nil
  "The request whose predicted edits are shown, a plist.
:uri and :version of the requested document, its :buffer and :tick
\(its `buffer-chars-modified-tick' but for accepted edits), :encoding
\(the answer's positionEncoding), :pending (its update has not
arrived), :files (uris with edits, in TAB order) and :unloaded (an
alist: uri -> edits of files not visited).")

(defvar mercury-next-edit-preview-mode)

(defun mercury--server ()
  (or (eglot-current-server) (user-error "mercury-lsp is not running in this buffer")))

(defun mercury--uri-path (uri)
  (if (fboundp 'eglot-uri-to-path) (eglot-uri-to-path uri) (eglot--uri-to-path uri)))

(defun mercury--buffer-uri ()
  (plist-get (eglot--TextDocumentIdentifier) :uri))

(defun mercury--drop ()
  "Remove this buffer's predicted edits (the buffer changed under them)."
  (mapc #'delete-overlay mercury--overlays)
  (setq mercury--overlays nil mercury--tick nil)
  (mercury-next-edit-preview-mode -1))

(defun mercury-next-edit-dismiss ()
  "Remove every predicted edit (all buffers and files)."
  (interactive)
  (dolist (buf (buffer-list))
    (with-current-buffer buf
      (when (or mercury--overlays mercury-next-edit-preview-mode) (mercury--drop))))
  (setq mercury--session nil))

(defun mercury--unloaded-count ()
  "How many predicted edits wait for their file to be visited."
  (cl-loop for (_ . edits) in (plist-get mercury--session :unloaded) sum (length edits)))

(defun mercury--count ()
  "How many predicted edits are pending, in every buffer and file."
  (+ (mercury--unloaded-count)
     (cl-loop for buf in (buffer-list) sum (length (buffer-local-value 'mercury--overlays buf)))))

(defun mercury--point (pos encoding)
  "The point of LSP position POS in this buffer.
ENCODING: utf-8, utf-16 or utf-32 columns."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (if (> (forward-line (plist-get pos :line)) 0)
          (point-max)
        (let ((units (plist-get pos :character)) (end (line-end-position)))
          (while (and (> units 0) (< (point) end))
            (let ((c (char-after)))
              (setq units (- units (pcase encoding
                                     ("utf-8" (length (encode-coding-char c 'utf-8)))
                                     ("utf-32" 1)
                                     (_ (if (> c #xFFFF) 2 1))))))
            (forward-char 1))
          (point))))))

(defun mercury--applies-p (e beg end)
  "Whether edit E still applies to this buffer's text from BEG to END.
An open document's edit needs the version it was computed for; a
file on disk's (documentVersion null) the text it replaces."
  (let ((version (plist-get e :documentVersion)) (old (plist-get e :oldText)))
    (and (or (null version) (eq version :null) (eql version eglot--versioned-identifier))
         (or (not (stringp old)) (equal old (buffer-substring-no-properties beg end))))))

(defun mercury--place (edits encoding)
  "Overlays in this buffer for the EDITS that still apply here; returns how many."
  (let ((n 0))
    (dolist (e edits)
      (let* ((range (plist-get e :range))
             (beg (mercury--point (plist-get range :start) encoding))
             (end (mercury--point (plist-get range :end) encoding)))
        (when (mercury--applies-p e beg end)
          (let ((ov (make-overlay beg end nil nil t)))
            (overlay-put ov 'face 'mercury-next-edit-old)
            (overlay-put ov 'after-string (propertize (plist-get e :newText) 'face 'mercury-next-edit-new))
            (overlay-put ov 'help-echo (format "mercury next edit: %s (confidence %.0f%%)"
                                               (plist-get e :reason) (* 100 (plist-get e :confidence))))
            (overlay-put ov 'mercury-new-text (plist-get e :newText))
            (push ov mercury--overlays)
            (setq n (1+ n))))))
    (setq mercury--overlays (sort mercury--overlays (lambda (a b) (< (overlay-start a) (overlay-start b)))))
    (when mercury--overlays
      (unless mercury--tick (setq mercury--tick (buffer-chars-modified-tick)))
      (mercury-next-edit-preview-mode 1))
    n))

(defun mercury--add (edits)
  "Add EDITS (`mercury/nextEdit' edits of any files) to the session.
Overlays in visited files, the others kept for TAB.  Returns how
many were added."
  (let ((by-uri nil) (n 0) (encoding (plist-get mercury--session :encoding)))
    (cl-loop for e across edits
             do (let ((cell (assoc (plist-get e :uri) by-uri)))
                  (if cell (setcdr cell (append (cdr cell) (list e)))
                    (setq by-uri (append by-uri (list (list (plist-get e :uri) e)))))))
    (pcase-dolist (`(,uri . ,mine) by-uri)
      (unless (member uri (plist-get mercury--session :files))
        (setq mercury--session (plist-put mercury--session :files
                                          (append (plist-get mercury--session :files) (list uri)))))
      (let ((buf (find-buffer-visiting (mercury--uri-path uri))))
        (if buf
            (setq n (+ n (with-current-buffer buf (mercury--place mine encoding))))
          (let ((cell (assoc uri (plist-get mercury--session :unloaded))))
            (if cell (setcdr cell (append (cdr cell) mine))
              (setq mercury--session (plist-put mercury--session :unloaded
                                                (append (plist-get mercury--session :unloaded)
                                                        (list (cons uri mine))))))
            (setq n (+ n (length mine)))))))
    n))

(defun mercury-next-edit ()
  "Ask mercury-lsp for the edits that follow the last ones and preview them.
The edits of workspace files that are not open arrive afterwards
and join the preview.  Returns how many are shown at once."
  (interactive)
  (eglot--signal-textDocument/didChange)  ; the server predicts from the text as it is now
  (let* ((server (mercury--server))
         (doc (eglot--VersionedTextDocumentIdentifier))
         (result (jsonrpc-request server :mercury/nextEdit
                                  (list :textDocument doc :position (eglot--pos-to-lsp-position))))
         (n 0))
    (mercury-next-edit-dismiss)
    (setq mercury--session (list :uri (plist-get doc :uri) :version (plist-get doc :version)
                                 :buffer (current-buffer) :tick (buffer-chars-modified-tick)
                                 :encoding (or (plist-get result :positionEncoding) "utf-16")
                                 :pending (eq (plist-get result :updatePending) t)
                                 :files (list (plist-get doc :uri)) :unloaded nil))
    (setq n (mercury--add (plist-get result :edits)))
    (when (plist-get mercury--session :pending) (mercury-next-edit-preview-mode 1))
    (when (called-interactively-p 'interactive)
      (message (if (> n 0) "mercury: %d predicted edit(s): TAB jumps/accepts, C-g dismisses"
                 "mercury: no next edit predicted here (other files may follow)")
               n))
    n))

(defun mercury--on-update (doc update result)
  "Merge a `mercury/nextEditUpdate' if it answers the shown request.
DOC is its textDocument, UPDATE its part number, RESULT its edits."
  (let ((s mercury--session))
    (when (and s (plist-get s :pending) (eql update mercury--cross-file-update)
               (equal (plist-get doc :uri) (plist-get s :uri))
               (eql (plist-get doc :version) (plist-get s :version))
               (buffer-live-p (plist-get s :buffer))
               (eql (plist-get s :tick) (with-current-buffer (plist-get s :buffer) (buffer-chars-modified-tick))))
      (plist-put s :pending nil)
      (let* ((uri (plist-get s :uri))
             (n (mercury--add (cl-remove-if (lambda (e) (equal (plist-get e :uri) uri))
                                            (plist-get result :edits)))))
        (when (> n 0)
          (message "mercury: %d more predicted edit(s) in other files (TAB goes there)" n))
        t))))

(cl-defmethod eglot-handle-notification
  (_server (_method (eql mercury/nextEditUpdate)) &key textDocument update result &allow-other-keys)
  "The workspace files' edits of a next-edit answer.
Merged when they answer the shown request."
  (mercury--on-update textDocument update result))

(defun mercury--target ()
  "The pending overlay TAB acts on in this buffer: under point, else the next one."
  (or (cl-find-if (lambda (ov) (<= (overlay-start ov) (point) (overlay-end ov))) mercury--overlays)
      (cl-find-if (lambda (ov) (> (overlay-start ov) (point))) mercury--overlays)))

(defun mercury--next-file ()
  "Go to the first predicted edit of the next file (wrapping to this one).
A file that is not visited yet is visited.  Returns whether it went
somewhere."
  (let* ((files (plist-get mercury--session :files))
         (here (mercury--buffer-uri))
         (start (or (cl-position here files :test #'equal) -1))
         (found nil))
    (cl-loop for k from 1 to (length files)
             for uri = (nth (mod (+ start k) (length files)) files)
             for waiting = (cdr (assoc uri (plist-get mercury--session :unloaded)))
             for buf = (or (find-buffer-visiting (mercury--uri-path uri))
                           (and waiting (find-file-noselect (mercury--uri-path uri))))
             do (when (and buf waiting)
                  (setq mercury--session
                        (plist-put mercury--session :unloaded
                                   (cl-remove uri (plist-get mercury--session :unloaded) :key #'car :test #'equal)))
                  (with-current-buffer buf (mercury--place waiting (plist-get mercury--session :encoding))))
             when (and buf (buffer-local-value 'mercury--overlays buf))
             do (progn (switch-to-buffer buf)
                       (goto-char (overlay-start (car mercury--overlays)))
                       (setq found t))
             and return nil)
    found))

(defun mercury-next-edit-accept ()
  "Jump to the next predicted edit; on it, apply it.
After this buffer's last one, TAB goes to the next file."
  (interactive)
  (unless (eql mercury--tick (buffer-chars-modified-tick))
    (mapc #'delete-overlay mercury--overlays) ; the buffer changed since the prediction
    (setq mercury--overlays nil mercury--tick nil))
  (let ((ov (mercury--target)))
    (cond ((null ov)
           (unless (mercury--next-file)
             (mercury-next-edit-dismiss)))
          ((not (<= (overlay-start ov) (point) (overlay-end ov))) (goto-char (overlay-start ov)))
          (t (let ((start (overlay-start ov)) (end (overlay-end ov))
                   (new (overlay-get ov 'mercury-new-text)))
               (setq mercury--overlays (delq ov mercury--overlays))
               (delete-overlay ov)
               (goto-char start)
               (delete-region start end)
               (insert new)
               (setq mercury--tick (buffer-chars-modified-tick))
               (when (eq (current-buffer) (plist-get mercury--session :buffer))
                 (plist-put mercury--session :tick mercury--tick))
               (when (zerop (mercury--count)) (mercury-next-edit-dismiss)))))))

(defvar mercury-next-edit-preview-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "TAB") #'mercury-next-edit-accept)
    (define-key map (kbd "<tab>") #'mercury-next-edit-accept)
    (define-key map (kbd "C-g") #'mercury-next-edit-dismiss)
    map)
  "Keys while predicted edits are shown.")

(define-minor-mode mercury-next-edit-preview-mode
  "Predicted edits are shown.
TAB jumps to the next one, then accepts it; C-g dismisses them."
  :lighter " mercury-edits" :keymap mercury-next-edit-preview-mode-map)

(defun mercury-apply-predicted-edits ()
  "Apply every predicted edit at once: eglot's \"Apply predicted edits\" code action."
  (interactive)
  (eglot--signal-textDocument/didChange)
  (let* ((actions (eglot-code-actions (point) nil "refactor.rewrite"))
         (action (cl-find-if (lambda (a) (string-prefix-p "Apply predicted edits" (plist-get a :title)))
                             actions)))
    (if (null action)
        (progn (when (called-interactively-p 'interactive) (message "mercury: no predicted edits")) nil)
      (if (fboundp 'eglot-execute)       ; eglot >= 1.14 (Emacs 29+): applies a code action
          (eglot-execute (mercury--server) action)
        (eglot--apply-workspace-edit (plist-get action :edit)))
      (mercury-next-edit-dismiss)
      (plist-get action :title))))

(defvar mercury-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c m n") #'mercury-next-edit)
    (define-key map (kbd "C-c m a") #'mercury-apply-predicted-edits)
    (define-key map (kbd "C-c m c") #'mercury-complete-confident)
    (define-key map (kbd "C-c m w") #'mercury-complete-word)
    (define-key map (kbd "C-c m l") #'mercury-complete-line)
    map)
  "Keys of `mercury-mode'.")

;;;###autoload
(define-minor-mode mercury-mode
  "mercury-lsp keys and mode-line state.
C-c m n: next edit; C-c m a: apply all predicted edits; C-c m c:
insert the confident part of the suggestion at point; C-c m w and
C-c m l: its next word, its next line.  `mercury-eglot-setup' turns
it on in the buffers eglot manages with mercury-lsp."
  :lighter (:eval (mercury-mode-line)) :keymap mercury-mode-map)

(provide 'mercury)
;;; mercury.el ends here
