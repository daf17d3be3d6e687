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
;; `M-x mercury-apply-predicted-edits' applies them all at once through eglot's code action
;; "Apply predicted edits" (also offered by `eglot-code-actions').
;;
;; Confident part: `M-x mercury-complete-confident' (C-c m c) inserts the suggestion at point up
;; to the model's first low-confidence token (the server's per-token confidences).
;;
;;   (add-to-list 'load-path "/path/to/mercury-lsp/editors/emacs")
;;   (require 'mercury)
;;   (setq mercury-server-command '("/path/to/mercury-lsp/.venv/bin/mercury-lsp" "serve"))
;;   (mercury-eglot-setup)
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
  "Make eglot start mercury-lsp for `mercury-modes'."
  (setq eglot-server-programs
        (cons (cons mercury-modes #'mercury--contact)
              (cl-remove #'mercury--contact eglot-server-programs :key #'cdr))))

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

(defvar-local mercury--overlays nil "Overlays of the pending predicted edits, in buffer order.")
(defvar-local mercury--tick nil "`buffer-chars-modified-tick' the pending edits are valid for.")

(defun mercury--server ()
  (or (eglot-current-server) (user-error "mercury-lsp is not running in this buffer")))

(defun mercury-next-edit-dismiss ()
  "Remove the predicted edits of this buffer."
  (interactive)
  (mapc #'delete-overlay mercury--overlays)
  (setq mercury--overlays nil mercury--tick nil)
  (mercury-next-edit-preview-mode -1))

(defun mercury--show (edits)
  "Preview EDITS (`mercury/nextEdit' edits of this buffer) as overlays."
  (mercury-next-edit-dismiss)
  (let ((uri (plist-get (eglot--TextDocumentIdentifier) :uri)))
    (cl-loop for e across edits
             when (equal (plist-get e :uri) uri)
             do (let* ((region (eglot--range-region (plist-get e :range)))
                       (ov (make-overlay (car region) (cdr region) nil nil t)))
                  (overlay-put ov 'face 'mercury-next-edit-old)
                  (overlay-put ov 'after-string (propertize (plist-get e :newText) 'face 'mercury-next-edit-new))
                  (overlay-put ov 'help-echo (format "mercury next edit: %s (confidence %.0f%%)"
                                                     (plist-get e :reason) (* 100 (plist-get e :confidence))))
                  (overlay-put ov 'mercury-new-text (plist-get e :newText))
                  (push ov mercury--overlays))))
  (setq mercury--overlays (sort mercury--overlays (lambda (a b) (< (overlay-start a) (overlay-start b))))
        mercury--tick (buffer-chars-modified-tick))
  (when mercury--overlays (mercury-next-edit-preview-mode 1))
  (length mercury--overlays))

(defun mercury-next-edit ()
  "Ask mercury-lsp for the edits that follow the last ones and preview them.
Returns how many are shown."
  (interactive)
  (eglot--signal-textDocument/didChange)  ; the server predicts from the text as it is now
  (let* ((server (mercury--server))
         (result (jsonrpc-request server :mercury/nextEdit
                                  (list :textDocument (eglot--VersionedTextDocumentIdentifier)
                                        :position (eglot--pos-to-lsp-position))))
         (n (mercury--show (plist-get result :edits))))
    (when (called-interactively-p 'interactive)
      (message (if (> n 0) "mercury: %d predicted edit(s): TAB jumps/accepts, C-g dismisses"
                 "mercury: no next edit predicted")
               n))
    n))

(defun mercury--target ()
  "The pending overlay TAB acts on: under point, else the next one (wrapping)."
  (or (cl-find-if (lambda (ov) (<= (overlay-start ov) (point) (overlay-end ov))) mercury--overlays)
      (cl-find-if (lambda (ov) (> (overlay-start ov) (point))) mercury--overlays)
      (car mercury--overlays)))

(defun mercury-next-edit-accept ()
  "Jump to the next predicted edit; on it, apply it."
  (interactive)
  (if (not (eql mercury--tick (buffer-chars-modified-tick)))
      (mercury-next-edit-dismiss)       ; the buffer changed since the prediction
    (let ((ov (mercury--target)))
      (cond ((null ov) (mercury-next-edit-dismiss))
            ((not (<= (overlay-start ov) (point) (overlay-end ov))) (goto-char (overlay-start ov)))
            (t (let ((start (overlay-start ov)) (end (overlay-end ov))
                     (new (overlay-get ov 'mercury-new-text)))
                 (setq mercury--overlays (delq ov mercury--overlays))
                 (delete-overlay ov)
                 (goto-char start)
                 (delete-region start end)
                 (insert new)
                 (setq mercury--tick (buffer-chars-modified-tick))
                 (unless mercury--overlays (mercury-next-edit-dismiss))))))))

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
    map)
  "Keys of `mercury-mode'.")

;;;###autoload
(define-minor-mode mercury-mode
  "mercury-lsp keys and mode-line state.
C-c m n: next edit; C-c m a: apply all predicted edits; C-c m c:
insert the confident part of the suggestion at point."
  :lighter (:eval (mercury-mode-line)) :keymap mercury-mode-map)

(provide 'mercury)
;;; mercury.el ends here
